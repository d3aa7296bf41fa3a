"""The `backend` section of `reso eval`'s and `reso demo`'s settings: where a command answers its questions
(`reso.evals.backends.open.open_backend` opens it). It imports nothing heavy, so the command line can build its
options from it."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["BackendOptions"]


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
