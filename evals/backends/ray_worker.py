"""A Ray worker of an evaluation: its own team, built from the run's settings, answering the questions it is sent.

`SolveWorker` is plain Python; `reso.evals.backends.ray_backend` starts it as an async Ray actor (many questions in
flight on its event loop). It builds its team with the run's team factory (`build_team` for the CLI: pool,
models, index, scorer, and the DADB the settings name, which every worker and the driver share), adapts it
to the run's method as the runner does, and answers in a run context whose learner learns once, so that
its subtasks only record their rewards: the driver applies each finished question's updates, once. A
worker restarted after a crash builds the same team again; the question it was answering is sent again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reso.evals.backends.ray_shared import SharedRunBudget, share_rate_limits
from reso.evals.datasets import Problem
from reso.evals.methods import Method
from reso.graphs.api import ReSo
from reso.graphs.context import RunContext
from reso.graphs.learning import Learner
from reso.graphs.run_records import Result
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team

__all__ = ["SolveWorker", "WorkerSpec"]

TeamFactory = Callable[[ReSoSettings], Team]


@dataclass(frozen=True)
class WorkerSpec:
    """What every worker of a run is built from (sent to each, and again to a restarted one)."""

    base_settings: ReSoSettings
    """The settings the team is built from (the runner's `EvalConfig.settings`)."""
    settings: ReSoSettings
    """The run's settings: the base with the method's overrides."""
    method: Method
    team_factory: TeamFactory
    cwd: str
    """The driver's working folder: relative paths in the settings resolve from it where it exists."""
    cache_file: str | None = None
    """The response cache to use (None: none)."""
    ledger: Any = None
    """The run's `SpendLedger` actor when the run has a budget, else None (no run budget)."""
    limits: Any = None
    """The run's `RateLimits` actor when a model has a rate limit, else None."""
    max_tokens: int | None = None
    max_usd: float | None = None
    max_seconds: float | None = None


class SolveWorker:
    """Answers questions with its own team in the run's context (see the module docstring)."""

    def __init__(self, spec: WorkerSpec) -> None:
        if Path(spec.cwd).is_dir():
            os.chdir(spec.cwd)
        from reso.agents.adapters.cache import disable_response_cache, enable_response_cache

        if spec.cache_file:
            enable_response_cache(spec.cache_file)
        else:
            disable_response_cache()
        import reso.graphs.graph  # noqa: F401 - the engine's graphs, compiled now: ready means ready to answer

        team = spec.team_factory(spec.base_settings)
        if spec.limits is not None:
            share_rate_limits(team, spec.limits)
        adapted = spec.method.adapt(team, seed=spec.settings.seed)
        self._budget = _run_budget(spec)
        # The run's learner, which this worker never applies: its subtasks only record the rewards.
        learner = Learner.for_run(spec.settings, adapted.selector)
        self._reso = ReSo.in_run(RunContext(settings=spec.settings, team=adapted, budget=self._budget,
                                            learner=learner))

    def where(self) -> tuple[int, str]:
        """This worker's process id and Ray node id (a restarted worker has a new process)."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    async def solve(self, problem: Problem, references: Mapping[str, str] | None) -> Result:
        if self._budget is not None:
            await self._budget.refresh()
        try:
            return await self._reso.asolve(problem.question, references=references, plan=problem.plan or None)
        finally:
            if self._budget is not None:
                await self._budget.flush()


def _run_budget(spec: WorkerSpec) -> SharedRunBudget | None:
    """The worker's view of the run budget, its wall clock set from the ledger's (None without a budget)."""
    if spec.ledger is None:
        return None
    import ray

    tokens, usd = ray.get(spec.ledger.totals.remote())
    elapsed = ray.get(spec.ledger.elapsed_s.remote())
    return SharedRunBudget(max_tokens=spec.max_tokens, max_usd=spec.max_usd, max_seconds=spec.max_seconds,
                           tokens=tokens, usd=usd, started=time.monotonic() - elapsed, ledger=spec.ledger)
