"""`reso bench scale`: throughput of the Ray backend with 1, 2 and 4 workers on a two-node local cluster.

The same batch of `reso bench eval`'s latency-bound questions (`bench_problems`: three sub-questions and
an integration step, every one answered by fake agents that wait a fixed latency, `bench_team`) goes
through the real runner with the Ray backend (`reso.evals.backends.ray_backend`), once per worker count. The cluster
is two `ray start` nodes on this machine (`reso.evals.backends.ray_cluster`), or an existing one (`address`); the
workers are spread over its nodes. Each worker answers `concurrency` questions at once, so a worker's ideal
throughput is `concurrency / critical path` whatever the cores: the agents wait, they do not compute.

Throughput is the batch over the time from the moment every worker had built its team (a run's start-up,
reported apart as `startup_s`) to the last result; `efficiency = items_per_s / (workers × items_per_s of
one worker)`, so 1.0 means workers add throughput without loss.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.evals.bench.eval import PLAN_DEPTH, bench_problems, bench_team
from reso.graphs.escalation import AskingRule
from reso.graphs.plan_settings import Integration, PlannerName
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team

TARGET_EFFICIENCY = 0.8
"""Efficiency to reach at 4 workers."""


@dataclass(frozen=True)
class LatencyTeam:
    """A worker's team factory: `bench_team`'s fake agents of fixed latency, learning into the DADB the
    settings name (in memory for this process when they name none)."""

    latency_s: float
    agents: int = 4

    def __call__(self, settings: ReSoSettings) -> Team:
        team = bench_team(self.latency_s, agents=self.agents, k=settings.asking.k,
                          embedder=settings.selection.embedder, seed=settings.seed)
        if not settings.db:
            return team
        from reso.agents.dadb.open import open_dadb
        from reso.agents.selection.config import SelectorConfig
        from reso.agents.selection.embeddings import load_embedder
        from reso.agents.selection.selector import ReputationSelector

        dadb = open_dadb(settings.db, mode=settings.mode)
        selector = ReputationSelector(team.pool, dadb, load_embedder(settings.selection.embedder),
                                      SelectorConfig(top_m=len(team.pool), exploration_c=0.0), seed=settings.seed)
        return dataclasses.replace(team, dadb=dadb, selector=selector)


def bench_settings(*, k: int = 2, seed: int = 0, mode: Mode = Mode.TEST, db: str = "") -> ReSoSettings:
    """The settings of a scale run: the given plans, every step selected (so a fake agent is on each), k agents
    asked at once (the paper's fixed fine stage: the calls a step makes are what the run measures)."""
    return ReSoSettings().replace({"plan.planner": PlannerName.GIVEN, "asking.rule": AskingRule.FIXED, "asking.k": k,
                                   "reward.scorer": "consensus", "selection.embedder": "hash:256",
                                   "plan.integration": Integration.SELECT}, mode=mode, seed=seed, db=db)


def _one_run(workers: int, *, questions: int, latency_s: float, concurrency: int, agents: int, k: int,
             seed: int, out: Path) -> dict[str, Any]:
    from reso.evals.backends.ray_backend import RayBackend
    from reso.evals.eval_config import EvalConfig, RunOptions
    from reso.evals.methods import parse_method
    from reso.evals.runner import run_eval

    factory = LatencyTeam(latency_s, agents)
    settings = bench_settings(k=k, seed=seed)
    team = factory(settings)
    config = EvalConfig(dataset="bench-scale", method=parse_method("reso", team.pool), out=out, settings=settings,
                        run=RunOptions(concurrency=workers * concurrency), command=["reso", "bench", "scale"])
    finished: list[float] = []
    started = time.monotonic()
    with RayBackend(workers=workers, team_factory=factory) as backend:
        summary = asyncio.run(run_eval(config, bench_problems(questions), team, backend=backend,
                                       progress=lambda row: finished.append(time.monotonic())))
    run = backend.runs[-1]
    assert run.ready_at is not None
    wall = finished[-1] - run.ready_at
    return {"workers": workers, "items_per_s": questions / wall, "wall_s": wall,
            "ideal_items_per_s": workers * concurrency / (PLAN_DEPTH * latency_s),
            "startup_s": run.ready_at - started, "nodes_used": len(set(run.nodes)),
            "accuracy": summary["accuracy"], "failed_items": summary["failed_items"]}


def run_bench(*, workers: Sequence[int] = (1, 2, 4), questions: int = 128, latency_ms: float = 300.0,
              concurrency: int = 8, agents: int = 4, k: int = 2, nodes: int = 2, seed: int = 0,
              address: str | None = None) -> dict[str, Any]:
    """The whole benchmark; returns the JSON report.

    Args:
        workers: Worker counts to run the batch with; the first is the baseline of `efficiency` (normally 1).
        questions: Questions in the batch.
        latency_ms: Every fake agent's latency per call.
        concurrency: Questions in flight per worker.
        agents: Fake agents in the pool (the calculator comes on top).
        k: Candidates per subtask (at least 2, so that a fake agent answers every step).
        nodes: Nodes of the local cluster started for the benchmark (ignored with `address`).
        seed: Seed of selection tie-breaks.
        address: An existing Ray cluster to use instead of starting one.

    Raises:
        ValueError: A size, latency or k out of range.
    """
    if not workers or min(workers) < 1 or questions < 1 or concurrency < 1 or nodes < 1:
        raise ValueError("workers, questions, concurrency and nodes must be at least 1")
    if latency_ms <= 0:
        raise ValueError(f"latency_ms must be > 0, got {latency_ms}")
    if k < 2:
        raise ValueError(f"k must be at least 2 so that a fake agent answers every step, got {k}")
    import ray

    from reso.evals.backends.ray_auth import use_token
    from reso.evals.backends.ray_cluster import start_local_cluster, wait_for_nodes

    with contextlib.ExitStack() as stack:
        # Unwound last first: the driver disconnects, then gives the cluster's token back, then the nodes stop.
        cluster = None if address else stack.enter_context(
            start_local_cluster(nodes, cpus_per_node=math.ceil(max(workers) / nodes)))
        stack.enter_context(use_token(cluster.token if cluster is not None else None))
        stack.callback(ray.shutdown)
        ray.init(address=cluster.address if cluster is not None else address, log_to_driver=False,
                 logging_level=logging.WARNING)
        wait_for_nodes(ray, 1 if address else nodes)
        cluster_nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
        with tempfile.TemporaryDirectory(prefix="reso-bench-scale-") as folder:
            rows = [_one_run(count, questions=questions, latency_s=latency_ms / 1000, concurrency=concurrency,
                             agents=agents, k=k, seed=seed, out=Path(folder) / f"workers-{count}")
                    for count in workers]
    single = rows[0]["items_per_s"] / rows[0]["workers"]
    for row in rows:
        row["efficiency"] = row["items_per_s"] / (row["workers"] * single)
    return {
        "rows": rows,
        "questions": questions,
        "latency_ms": latency_ms,
        "concurrency_per_worker": concurrency,
        "critical_path_ms": PLAN_DEPTH * latency_ms,
        "nodes": cluster_nodes,
        "cluster": "existing" if address else f"{nodes} local `ray start` nodes",
        "target_efficiency": TARGET_EFFICIENCY,
        "config": {"agents": agents, "k": k, "embedder": "hash:256", "scorer": "consensus", "seed": seed,
                   "mode": "test"},
        "machine": {"cpus": os.cpu_count(),
                    "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None},
    }


def render_table(report: dict[str, Any]) -> Any:
    """The report as a rich table."""
    from rich.table import Table

    table = Table(title=f"reso bench scale: {report['questions']} questions, {report['latency_ms']:g} ms agents, "
                        f"{report['concurrency_per_worker']} in flight per worker, {report['nodes']} nodes")
    for column in ("workers", "items / s", "ideal\nitems / s", "efficiency", "start-up\ns", "nodes\nused"):
        table.add_column(column, justify="right")
    for row in report["rows"]:
        table.add_row(str(row["workers"]), f"{row['items_per_s']:.1f}", f"{row['ideal_items_per_s']:.1f}",
                      f"{row['efficiency']:.3f}", f"{row['startup_s']:.1f}", str(row["nodes_used"]))
    table.caption = (f"efficiency = items/s ÷ (workers × one worker's items/s); target ≥ "
                     f"{report['target_efficiency']:g} at 4 workers")
    return table
