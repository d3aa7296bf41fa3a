"""Where an evaluation's questions are answered: the `Backend` protocol and `InProcess`, this process
(`base.py`), and Ray workers spread over a cluster (`ray_backend.py` starting `ray_worker.py`'s actors,
which share a run budget and rate limits through `ray_shared.py`; `ray_cluster.py` starts a local
cluster of several nodes for `reso bench scale` and the tests, and `ray_auth.py` gives what is started here
a token of its own). `open_backend` (`open.py`) picks one by name.

Public names are imported on first use, so importing the package loads neither the engine nor Ray.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.evals.backends.base import (
        Backend,
        BackendError,
        BackendSetupError,
        InProcess,
        InProcessSolver,
        Solver,
    )
    from reso.evals.backends.open import open_backend
    from reso.evals.backends.ray_backend import RayBackend, RaySolver
    from reso.evals.backends.ray_cluster import LocalCluster, start_local_cluster

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

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "base": ["Backend", "BackendError", "BackendSetupError", "InProcess", "InProcessSolver", "Solver"],
    "open": ["open_backend"],
    "ray_backend": ["RayBackend", "RaySolver"],
    "ray_cluster": ["LocalCluster", "start_local_cluster"],
})
