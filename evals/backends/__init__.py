"""Where an evaluation's questions are answered: the `Backend` protocol and `InProcess`, this process
(`base.py`), and Ray workers spread over a cluster (`ray_backend.py` starting `ray_worker.py`'s actors,
which share a run budget and rate limits through `ray_shared.py`; `ray_cluster.py` starts a local
cluster of several nodes for `reso bench scale` and the tests). `open_backend` picks one by name.

Public names are imported on first use, so importing the package loads neither the engine nor Ray.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.evals.backends.base import (
        Backend,
        BackendError,
        BackendSetupError,
        InProcess,
        InProcessSolver,
        Solver,
        open_backend,
    )
    from reso.evals.backends.ray_backend import RayBackend, RaySolver
    from reso.evals.backends.ray_cluster import LocalCluster, start_local_cluster

_EXPORTS: dict[str, str] = {
    "Backend": "reso.evals.backends.base",
    "BackendError": "reso.evals.backends.base",
    "BackendSetupError": "reso.evals.backends.base",
    "InProcess": "reso.evals.backends.base",
    "InProcessSolver": "reso.evals.backends.base",
    "Solver": "reso.evals.backends.base",
    "open_backend": "reso.evals.backends.base",
    "RayBackend": "reso.evals.backends.ray_backend",
    "RaySolver": "reso.evals.backends.ray_backend",
    "LocalCluster": "reso.evals.backends.ray_cluster",
    "start_local_cluster": "reso.evals.backends.ray_cluster",
}

__all__ = [
    "Backend",
    "BackendError",
    "BackendSetupError",
    "InProcess",
    "InProcessSolver",
    "LocalCluster",
    "RayBackend",
    "RaySolver",
    "Solver",
    "open_backend",
    "start_local_cluster",
]


def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562), so importing the package loads none of its heavy dependencies.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
