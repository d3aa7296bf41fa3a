"""Choosing a backend: `BackendOptions` (the `backend` section of `reso eval`'s and `reso demo`'s settings) and
`open_backend`.

It sits above both backends (`base.py`'s in-process default and `ray_backend.py`), which raise `base.py`'s
errors, so that neither backend imports the other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reso.evals.backends.base import Backend, BackendSetupError

__all__ = ["BackendOptions", "open_backend"]


@dataclass(kw_only=True, frozen=True)
class BackendOptions:
    """Where a command answers its questions."""

    kind: str = field(default="local", metadata={"answers": False, "description": (
        "local: this process | ray: Ray workers, each with its own team (README, cluster).")})
    address: str = field(default="", metadata={"answers": False, "description": (
        "With kind ray: the Ray cluster to join (HOST:PORT, or auto); empty: a local Ray instance.")})
    workers: int = field(default=2, metadata={"answers": False, "description": (
        "With kind ray: workers (Ray actors) to start (per run, for reso demo).")})

    def __post_init__(self) -> None:
        if self.kind not in ("local", "ray"):
            raise ValueError(f"backend.kind must be local or ray, got {self.kind!r}")
        if self.address and self.kind != "ray":
            raise ValueError("backend.address goes with backend.kind ray")
        if self.workers < 1:
            raise ValueError(f"backend.workers must be >= 1, got {self.workers}")


@contextlib.contextmanager
def open_backend(name: str, *, address: str | None = None, workers: int = 2,
                 cache_file: str | Path | None = None) -> Iterator[Backend | None]:
    """The backend `reso eval --backend NAME` names, open for the runs made in the `with` block: None for
    `local` (the runner's default, in this process), a connected `RayBackend` for `ray`.

    Raises:
        BackendSetupError: An unknown name, or the backend cannot start.
    """
    if name == "local":
        yield None
        return
    if name != "ray":
        raise BackendSetupError(f"--backend must be local or ray, got {name!r}")
    from reso.evals.backends.ray_backend import RayBackend

    cache = str(Path(cache_file).resolve()) if cache_file else None
    with RayBackend(address=address, workers=workers, cache_file=cache) as backend:
        yield backend
