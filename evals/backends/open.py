"""Opening the backend a command names (`BackendOptions`, the `backend` section of its settings): `open_backend`.

It sits above both backends (`base.py`'s in-process default and `ray_backend.py`), which raise `base.py`'s
errors, so that neither backend imports the other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from reso.evals.backends.base import Backend, BackendSetupError
from reso.evals.backends.options import BackendOptions

__all__ = ["BackendOptions", "open_backend"]


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
        raise BackendSetupError(f"backend.kind must be local or ray, got {name!r}")
    from reso.evals.backends.ray_backend import RayBackend

    cache = str(Path(cache_file).resolve()) if cache_file else None
    with RayBackend(address=address, workers=workers, cache_file=cache) as backend:
        yield backend
