"""The Ray backend of `reso eval --backend ray`: a run's questions sharded over Ray workers.

```python
with RayBackend(address="head:6379", workers=4) as backend:    # None: a local Ray instance of its own
    summary = asyncio.run(run_eval(config, problems, team, backend=backend))
```

Each run starts `workers` actors (`reso.evals.backends.ray_worker.SolveWorker`), spread over the cluster's nodes, each
building its own team from the run's settings and answering up to `ceil(concurrency / workers)` questions at
once; the driver sends each question to the least busy worker. Results come back to the driver, which alone
writes `results.jsonl` and applies the learning (`reso.evals.runner`), so resume, provenance, reports and
exactly-once learning are the single-process ones. What the workers share:

- the DADB the settings name. A PostgreSQL DADB serves any cluster; a SQLite file serves the workers of
  one machine only, so a run whose cluster has nodes elsewhere is refused, as is a training run on an
  in-memory DADB (each worker would have its own);
- the run budget: a `SpendLedger` actor sums every worker's calls; the driver reads it after each result
  and stops sending questions once the run is spent, and each worker refuses calls then, give or take the
  calls already in flight (`reso.evals.backends.ray_shared`);
- each model's `requests_per_second`, one bucket for the cluster (`RateLimits`). `params.max_concurrency`
  stays per worker process: an endpoint may see up to `workers` times that many calls at once.

A local instance has an authentication token of its own, in this process's environment while it runs
(`ray_auth.py`); a cluster given by `address` takes the token Ray finds as its documentation says
(`RAY_AUTH_MODE=token` with `RAY_AUTH_TOKEN`, `RAY_AUTH_TOKEN_PATH` or `~/.ray/auth_token`), and a refused
token is named in the error.

A worker process that dies is restarted (up to `MAX_RESTARTS` times) and the questions it was answering
are sent again; it had applied nothing, so nothing is learned twice. A driver killed mid-run resumes from
`results.jsonl` and the DADB like any run. Ray is an optional dependency (`pip install
'reso-langgraph[ray]'`), imported only when a backend connects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reso.agents.dadb.base import Mode
from reso.agents.dadb.url import is_postgres_url, redact
from reso.evals.backends.base import BackendError, BackendSetupError
from reso.evals.backends.ray_auth import MODE_VAR, TOKEN_PATH_VAR, TOKEN_VAR, new_token, use_token
from reso.evals.backends.ray_shared import RateLimits, SpendLedger
from reso.evals.backends.ray_worker import SolveWorker, TeamFactory, WorkerSpec
from reso.graphs.context import RunContext
from reso.graphs.run_records import Result
from reso.graphs.team import build_team

if TYPE_CHECKING:
    from reso.evals.datasets import Problem
    from reso.evals.eval_config import EvalConfig

__all__ = ["RayBackend", "RaySolver", "WorkerRun"]

WORKER_CPUS = 1.0
"""Logical CPUs each worker reserves: what places workers on nodes (they mostly wait on models)."""
MAX_RESTARTS = 4
"""Restarts of one worker process per run before the run fails (a rerun resumes it)."""


@dataclass
class WorkerRun:
    """What one run's workers were: process ids at start and at the end (a restarted worker has a new one),
    their nodes, when they were all ready (`time.monotonic()` of the driver), and what the run spent in
    all (tokens, USD: the ledger's totals, cut questions included; None without a run budget)."""

    pids: list[int] = field(default_factory=list)
    final_pids: list[int] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    ready_at: float | None = None
    spent: tuple[int, float] | None = None

    @property
    def restarted(self) -> int:
        """Workers whose process changed during the run."""
        return sum(1 for before, after in zip(self.pids, self.final_pids, strict=False) if before != after)


class RayBackend:
    """Connects to Ray (or starts a local instance) for the runs made in its `with` block."""

    def __init__(self, *, address: str | None = None, workers: int = 2, team_factory: TeamFactory = build_team,
                 cache_file: str | None = None, worker_cpus: float = WORKER_CPUS) -> None:
        if workers < 1:
            raise BackendSetupError(f"backend.workers must be at least 1, got {workers}")
        self.address = address
        self.workers = workers
        self.team_factory = team_factory
        self.cache_file = cache_file
        self.worker_cpus = worker_cpus
        self.runs: list[WorkerRun] = []
        self._owns_ray = False
        self._token = contextlib.ExitStack()

    def __enter__(self) -> RayBackend:
        try:
            import ray
        except ImportError:
            raise BackendSetupError("backend.kind ray needs Ray: pip install 'reso-langgraph[ray]'") from None
        if self.address is not None:
            _check_reachable(self.address)
        if ray.is_initialized():  # this process is connected already (the Python API, the benchmark)
            return self
        options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
        if self.address is None:
            # "local": a new instance even where RAY_ADDRESS or a `ray start` cluster exists (--address auto joins).
            options |= {"address": "local", "include_dashboard": False,
                        "num_cpus": max(os.cpu_count() or 1, math.ceil(self.workers * self.worker_cpus))}
        else:
            options["address"] = self.address
        # A local instance gets a token of its own (`ray_auth.py`), so that Ray writes none to ~/.ray.
        self._token = contextlib.ExitStack()
        self._token.enter_context(use_token(new_token() if self.address is None else None))
        try:
            ray.init(**options)
        except (ConnectionError, RuntimeError, ValueError, ray.exceptions.RayError) as error:
            self._token.close()
            where = ("cannot start a local Ray instance" if self.address is None
                     else f"backend.address {self.address}: cannot join a Ray cluster there")
            raise BackendSetupError(f"{where}: {_join_error(error)}") from None
        self._owns_ray = True
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._owns_ray:
            import ray

            ray.shutdown()
            self._owns_ray = False
            self._token.close()

    def solver(self, config: EvalConfig, context: RunContext) -> RaySolver:
        return RaySolver(self, config, context)


@dataclass
class _Worker:
    actor: Any
    in_flight: int = 0


class RaySolver:
    """One run's workers: started at the first question, stopped when the run ends."""

    def __init__(self, backend: RayBackend, config: EvalConfig, context: RunContext) -> None:
        self.backend = backend
        self.config = config
        self.context = context
        self.run = WorkerRun()
        self._workers: list[_Worker] = []
        self._ledger: Any = None
        self._limits: Any = None
        self._started = False
        self._failure: BackendSetupError | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> RaySolver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._started:
            return
        import ray

        try:
            if self._ledger is not None:
                self.run.spent = tuple(await self._ledger.totals.remote())
            where = [worker.actor.where.remote() for worker in self._workers]
            self.run.final_pids = [pid for pid, _ in await asyncio.wait_for(asyncio.gather(*where), timeout=30)]
        except Exception:  # noqa: BLE001 - a worker gone for good: there is nothing more to record
            pass
        for actor in [worker.actor for worker in self._workers] + [self._ledger, self._limits]:
            if actor is not None:
                ray.kill(actor, no_restart=True)

    def _spec(self) -> WorkerSpec:
        config, settings = self.config, self.context.settings
        return WorkerSpec(base_settings=config.settings, settings=settings, method=config.method,
                          team_factory=self.backend.team_factory, cwd=os.getcwd(), cache_file=self.backend.cache_file,
                          ledger=self._ledger, limits=self._limits, max_tokens=config.run.budget_tokens,
                          max_usd=config.run.budget_usd, max_seconds=config.run.budget_seconds)

    async def _start(self) -> None:
        async with self._lock:
            if self._failure is not None:  # every question waiting for the start gets its error
                raise self._failure
            if self._started:
                return
            import ray

            try:
                self._check_dadb(ray)
            except BackendSetupError as error:
                self._failure = error
                raise
            self._started = True
            budget = self.context.budget
            if budget is not None and any(limit is not None for limit in (
                    self.config.run.budget_tokens, self.config.run.budget_usd, self.config.run.budget_seconds)):
                self._ledger = ray.remote(SpendLedger).options(num_cpus=0).remote(
                    budget.tokens, budget.usd, time.monotonic() - budget.started)
            team = self.context.require_team()
            if any("requests_per_second" in agent.model.params for agent in team.pool):
                self._limits = ray.remote(RateLimits).options(num_cpus=0, max_concurrency=10_000).remote()
            per_worker = max(1, math.ceil(self.config.run.concurrency / self.backend.workers))
            worker_class = ray.remote(SolveWorker).options(
                num_cpus=self.backend.worker_cpus, max_concurrency=per_worker, max_restarts=MAX_RESTARTS,
                max_task_retries=MAX_RESTARTS, scheduling_strategy="SPREAD")
            spec = self._spec()
            self._workers = [_Worker(worker_class.remote(spec)) for _ in range(self.backend.workers)]
            try:
                where = await asyncio.gather(*(worker.actor.where.remote() for worker in self._workers))
            except ray.exceptions.RayError as error:
                self._failure = BackendSetupError(f"a Ray worker could not start: {_cause_line(error)}")
                raise self._failure from None
            self.run.pids, self.run.nodes = [pid for pid, _ in where], [node for _, node in where]
            self.run.ready_at = time.monotonic()
            self.backend.runs.append(self.run)

    def _check_dadb(self, ray: Any) -> None:
        """Refuse a DADB the workers cannot share (see the module docstring)."""
        settings = self.context.settings
        if not settings.db:
            if settings.mode == Mode.TRAIN:
                raise BackendSetupError("training on Ray workers needs a DADB they share: --db FILE on one "
                                        "machine, or --db postgresql://… on a cluster")
            return
        if is_postgres_url(settings.db):
            return
        here = ray.util.get_node_ip_address()
        elsewhere = sorted({node["NodeManagerAddress"] for node in ray.nodes() if node.get("Alive")} - {here})
        if elsewhere:
            raise BackendSetupError(f"--db {redact(settings.db)}: a SQLite DADB is on this machine only, but the Ray "
                               f"cluster has nodes on {', '.join(elsewhere)}: use --db postgresql://…")

    async def solve(self, problem: Problem, references: Mapping[str, str] | None) -> Result:
        await self._start()
        import ray

        worker = min(self._workers, key=lambda w: w.in_flight)
        worker.in_flight += 1
        try:
            result: Result = await worker.actor.solve.remote(problem, dict(references) if references else None)
        except ray.exceptions.RayActorError as error:
            raise BackendError(f"a Ray worker died {MAX_RESTARTS} times or its node is gone "
                               f"({_cause_line(error)}); rerun the same command to resume") from None
        finally:
            worker.in_flight -= 1
        await self._sync_budget()
        return result

    async def _sync_budget(self) -> None:
        """Bring the runner's run budget up to what every worker spent, and mark it exceeded when it is."""
        budget = self.context.budget
        if self._ledger is None or budget is None:
            return
        tokens, usd = await self._ledger.totals.remote()
        budget.tokens, budget.usd = max(budget.tokens, int(tokens)), max(budget.usd, float(usd))
        budget.stop()


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Refuse a HOST:PORT where nothing listens: Ray itself would retry for minutes before failing."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local", or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as error:
        raise BackendSetupError(f"backend.address {address}: no Ray cluster answers there ({error.strerror or error}); "
                                "start one with `ray start --head`") from None


def _join_error(error: BaseException) -> str:
    """Why joining failed, in one line; for a refused token (Ray names it only in the error's cause), what to set."""
    chain: list[BaseException] = [error]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) is not None and cause not in chain:
        chain.append(cause)
    if any("Authentication token is missing or incorrect" in str(link) for link in chain):
        return (f"{_first_line(error)}: the cluster refused this driver's token (set {MODE_VAR}=token and the "
                f"cluster's token in {TOKEN_VAR}, {TOKEN_PATH_VAR} or ~/.ray/auth_token, as on its nodes)")
    return _first_line(error)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _cause_line(error: BaseException) -> str:
    """The line of a Ray error that says what went wrong in the worker: the last `Type: message` line of the
    traceback it carries, else its first line."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    causes = [line for line in lines if ": " in line and line.split(":", 1)[0].replace(".", "").isidentifier()]
    return redact(causes[-1] if causes else (lines[0] if lines else type(error).__name__))
