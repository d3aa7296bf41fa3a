"""Where an evaluation's questions are answered: in this process (the default), or elsewhere (Ray workers).

The runner (`reso.evals.runner.run_eval`) owns everything that must happen once per run: the results file,
resume, provenance, the run budget's stopping rule, and exactly-once learning. A backend only answers
questions: `Backend.solver` hands the runner a `Solver` for one run, entered around the run's questions;
`Solver.solve` returns a question's `Result`, whose candidates carry the rewards the runner then applies.
A solver whose questions run elsewhere keeps the run context's budget up to date with what they spent, so
the runner's checks see it. `InProcess` solves with `ReSo.in_run` on the runner's own event loop;
`reso.evals.backends.ray_backend.RayBackend` shards the questions over Ray workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from reso.graphs.api import ReSo
from reso.graphs.context import RunContext
from reso.graphs.run_records import Result

if TYPE_CHECKING:
    from reso.evals.datasets import Problem
    from reso.evals.eval_config import EvalConfig

__all__ = ["Backend", "BackendError", "BackendSetupError", "InProcess", "InProcessSolver", "Solver"]


class Solver(Protocol):
    """Answers the questions of one run; entered (`async with`) around them, so it may start and stop workers."""

    async def solve(self, problem: Problem, references: Mapping[str, str] | None) -> Result:
        """The result of `problem` (planned by its ground-truth plan when it has one)."""
        ...

    async def __aenter__(self) -> Solver: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


class Backend(Protocol):
    """Makes the solver of each run."""

    def solver(self, config: EvalConfig, context: RunContext) -> Solver:
        """The solver of the run `config` describes; `context` is the runner's (settings with the method's
        overrides, the adapted team, the run budget, the learner)."""
        ...


class InProcessSolver:
    """Questions answered in this process, in the runner's run context."""

    def __init__(self, context: RunContext) -> None:
        self._reso = ReSo.in_run(context)

    async def solve(self, problem: Problem, references: Mapping[str, str] | None) -> Result:
        return await self._reso.asolve(problem.question, references=references, plan=problem.plan or None)

    async def __aenter__(self) -> InProcessSolver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


class InProcess:
    """The default backend: every question on the runner's event loop."""

    def solver(self, config: EvalConfig, context: RunContext) -> InProcessSolver:
        return InProcessSolver(context)


class BackendError(RuntimeError):
    """A backend failed mid-run (a worker died for good; a rerun resumes); the message is one line."""


class BackendSetupError(BackendError):
    """A backend cannot start: its library missing, a cluster unreachable, bad options, a DADB its workers cannot
    share, a worker that could not build its team; the message is one line."""
