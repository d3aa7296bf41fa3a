"""`reso bench eval`: throughput of the batch runner against the ideal time for its concurrency.

A batch of GSM8K-MAS-Easy-shaped questions (three sub-questions, the second built on the first, plus the
integration step "calculate Answer[0]*Answer[1]*Answer[2]") goes through the real runner
(`reso.evals.runner.run_eval`: the ReSo engine, the reputation selector over a FAISS index, the consensus CRM, a
DADB, results appended and fsynced item by item) with fake agents that wait a fixed latency and answer
`\\boxed{1}`, beside the exact calculator tool agent. Every item is right (1·1·1 = 1), a sanity check.

The ideal time is `ceil(questions / concurrency) × critical path`, not `questions × critical path /
concurrency`: each question holds one of the runner's slots for its whole critical path, and identical
questions cannot share a slot, so no schedule of identical questions over `concurrency` slots finishes
sooner (the fluid bound would let a question be split across slots, which the runner never does, and is
unattainable whenever `concurrency` does not divide `questions`). The critical path is the plan's depth (3
steps) × the latency: with k ≥ 2 candidates and a single tool agent, a latency-faking agent answers every
step, the integration step included, and the report counts the steps where that did not hold.
`throughput_ratio` is ideal time / measured wall time (1.0: the runner adds nothing).
"""

from __future__ import annotations

import asyncio
import math
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reso.evals.datasets import Problem

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

CALCULATOR = "tool/calculator"
PLAN_DEPTH = 3
"""Steps on the critical path of `bench_plan` (0 → 1 → final)."""


def bench_plan(question: int) -> list[dict[str, Any]]:
    """The GSM8K-MAS-Easy-shaped plan of one bench question: 0, 1 (uses Answer[0]), 2, then the product."""
    return [
        {"id": "0", "instruction": f"Bench question {question}, part A: how many apples are in the basket?",
         "depends_on": []},
        {"id": "1", "instruction": f"Bench question {question}, part B: with Answer[0] apples, how many bags?",
         "depends_on": ["0"]},
        {"id": "2", "instruction": f"Bench question {question}, part C: how many pears are on the table?",
         "depends_on": []},
        {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1]*Answer[2].",
         "depends_on": ["0", "1", "2"]},
    ]


def bench_problems(questions: int) -> list[Problem]:
    """`questions` bench items whose every answer is 1."""
    return [Problem(id=f"bench-{n}", question=f"Bench question {n}.", answer="1", plan=bench_plan(n),
                    subtask_answers={"0": "1", "1": "1", "2": "1", "final": "1"})
            for n in range(questions)]


def bench_team(latency_s: float, *, agents: int, k: int, embedder: str, seed: int) -> Any:
    """A team of `agents` latency-faking agents plus the calculator, with the real selector, CRM and an
    in-memory test-mode DADB."""
    from reso.agents.adapters.tools import CalculatorChatModel
    from reso.agents.dadb.base import Mode
    from reso.agents.dadb.sqlite import DADB
    from reso.agents.pool import pool_from_dict
    from reso.agents.selection.config import SelectorConfig
    from reso.agents.selection.embeddings import load_embedder
    from reso.agents.selection.selector import ReputationSelector
    from reso.evals.bench.dag import LatencyChatModel, bench_pool
    from reso.graphs.team import Team
    from reso.reward.registry import build_scorer

    fakes = bench_pool(agents)
    pool = pool_from_dict({"name": "bench-eval", "agents": [
        *({"id": agent.id, "model": agent.model.model_dump(exclude_none=True), "role": agent.role,
           "profile": agent.profile} for agent in fakes),
        {"id": CALCULATOR, "model": {"spec": "tool:calculator"}, "role": "Exact arithmetic", "domain": "integration",
         "profile": "Evaluates arithmetic expressions exactly, such as products of earlier answers."},
    ]})
    models: dict[str, BaseChatModel] = {agent.id: LatencyChatModel(default_s=latency_s) for agent in fakes}
    models[CALCULATOR] = CalculatorChatModel()
    dadb = DADB(None, mode=Mode.TEST)
    selector = ReputationSelector(pool, dadb, load_embedder(embedder),
                                  SelectorConfig(top_m=len(pool), exploration_c=0.0), seed=seed)
    return Team(pool=pool, models=models, selector=selector, scorer=build_scorer("consensus"), dadb=dadb)


def _set_latency(team: Any, latency_s: float) -> None:
    for agent_id, model in team.models.items():
        if agent_id != CALCULATOR:
            model.default_s = latency_s


async def _run(team: Any, problems: Sequence[Problem], out: Path, *, concurrency: int, k: int, embedder: str,
               seed: int) -> dict[str, Any]:
    from reso.agents.dadb.base import Mode
    from reso.evals.eval_config import EvalConfig, RunOptions
    from reso.evals.methods import parse_method
    from reso.evals.runner import run_eval
    from reso.graphs.escalation import AskingRule
    from reso.graphs.plan_settings import Integration, PlannerName
    from reso.graphs.settings import ReSoSettings

    # Integration steps are selected like the others, so a fake agent (and its latency) is on every step; k
    # agents answer each (the paper's fixed fine stage: the throughput of k calls a step is what is measured).
    settings = ReSoSettings().replace({"plan.planner": PlannerName.GIVEN, "asking.rule": AskingRule.FIXED, "asking.k": k,
                                       "reward.scorer": "consensus", "selection.embedder": embedder,
                                       "plan.integration": Integration.SELECT}, mode=Mode.TEST, seed=seed)
    config = EvalConfig(dataset="bench-eval", method=parse_method("reso", team.pool), out=out, settings=settings,
                        run=RunOptions(concurrency=concurrency), command=["reso", "bench", "eval"])
    return await run_eval(config, problems, team)


def _steps_without_fake(out: Path) -> int:
    """Steps whose candidates were the calculator alone (they wait no latency; see the module docstring)."""
    import json

    count = 0
    with (out / "results.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            for step in json.loads(line)["steps"]:
                if all(c["agent_id"] == CALCULATOR for c in step["candidates"]):
                    count += 1
    return count


def peak_rss_mb() -> float:
    """The process's peak resident set size so far, in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def ideal_seconds(questions: int, concurrency: int, critical_path_s: float) -> float:
    """`ceil(questions / concurrency) × critical_path_s` (why not the fluid bound: module docstring)."""
    return math.ceil(questions / concurrency) * critical_path_s


def run_bench(*, questions: int = 200, latency_ms: float = 100.0, concurrency: int = 64, agents: int = 4,
              k: int = 2, embedder: str = "hash:256", seed: int = 0, trace_memory: bool = False,
              profile: Any = None) -> dict[str, Any]:
    """The whole benchmark; returns the JSON report.

    Args:
        questions: Questions in the timed batch.
        latency_ms: Every fake agent's latency per call.
        concurrency: Questions in flight at once (the runner's `concurrency`).
        agents: Latency-faking agents in the pool (the calculator comes on top).
        k: Candidates per subtask (at least 2, so a fake agent answers every step).
        embedder: Embedder of the selector's profile index (`hash:256` keeps the model load out of it).
        seed: Seed of selection tie-breaks.
        trace_memory: Also report tracemalloc's peak of the timed batch (slows allocation, so the
            throughput of such a run is not comparable).
        profile: A `cProfile.Profile` enabled around the timed batch only, or None.

    Raises:
        ValueError: A size, latency or k out of range.
    """
    if questions < 1 or concurrency < 1 or agents < 1:
        raise ValueError("questions, concurrency and agents must be at least 1")
    if latency_ms <= 0:
        raise ValueError(f"latency_ms must be > 0, got {latency_ms}")
    if k < 2:
        raise ValueError(f"k must be at least 2 so that a fake agent answers every step, got {k}")
    latency_s = latency_ms / 1000
    team = bench_team(latency_s, agents=agents, k=k, embedder=embedder, seed=seed)
    run = partial(_run, team, concurrency=concurrency, k=k, embedder=embedder, seed=seed)
    with tempfile.TemporaryDirectory(prefix="reso-bench-eval-") as folder:
        # Warm-up at zero latency: imports, first graph compilations and index searches are paid here.
        _set_latency(team, 0.0)
        asyncio.run(run(bench_problems(min(questions, 8)), Path(folder) / "warm-up"))
        _set_latency(team, latency_s)
        out = Path(folder) / "timed"
        rss_before = peak_rss_mb()
        if trace_memory:
            tracemalloc.start()
        if profile is not None:
            profile.enable()
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            summary = asyncio.run(run(bench_problems(questions), out))
        finally:
            if profile is not None:
                profile.disable()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        traced_peak = tracemalloc.get_traced_memory()[1] if trace_memory else None
        if trace_memory:
            tracemalloc.stop()
        calculator_only = _steps_without_fake(out)
    critical = PLAN_DEPTH * latency_s
    ideal = ideal_seconds(questions, concurrency, critical)
    report: dict[str, Any] = {
        "questions": questions,
        "latency_ms": latency_ms,
        "concurrency": concurrency,
        "critical_path_ms": 1000 * critical,
        "ideal_s": ideal,
        "wall_s": wall,
        "cpu_s": cpu,
        "throughput_ratio": ideal / wall,
        "items_per_s": questions / wall,
        "ideal_items_per_s": questions / ideal,
        "cpu_ms_per_question": 1000 * cpu / questions,
        # Above 1, the process's own CPU time (event loop and worker threads) exceeds the ideal time, so
        # no overlap of waiting and work can reach the target: the engine's per-question cost must fall.
        "cpu_over_ideal": cpu / ideal,
        "accuracy": summary["accuracy"],
        "failed_items": summary["failed_items"],
        "calculator_only_steps": calculator_only,
        "peak_rss_mb": peak_rss_mb(),
        "peak_rss_before_batch_mb": rss_before,
        "target_throughput_ratio": 0.85,
        "config": {"agents": agents, "k": k, "embedder": embedder, "scorer": "consensus", "seed": seed,
                   "mode": "test", "ideal": "ceil(questions / concurrency) * critical path"},
        "machine": {"cpus": os.cpu_count(),
                    "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None},
    }
    if traced_peak is not None:
        report["tracemalloc_peak_mb"] = traced_peak / (1024 * 1024)
    return report


def render_table(report: dict[str, Any]) -> Any:
    """The report as a rich table."""
    from rich.table import Table

    table = Table(title=f"reso bench eval: {report['questions']} questions at concurrency {report['concurrency']}, "
                        f"{report['latency_ms']:g} ms agents")
    for column in ("ideal\ns", "wall\ns", "throughput\nratio", "items\n/ s", "ideal\nitems / s",
                   "CPU ms\n/ question", "peak RSS\nMiB"):
        table.add_column(column, justify="right")
    table.add_row(f"{report['ideal_s']:.2f}", f"{report['wall_s']:.2f}", f"{report['throughput_ratio']:.3f}",
                  f"{report['items_per_s']:.1f}", f"{report['ideal_items_per_s']:.1f}",
                  f"{report['cpu_ms_per_question']:.1f}", f"{report['peak_rss_mb']:.0f}")
    table.caption = (f"ideal = ceil(questions / concurrency) × critical path ({report['critical_path_ms']:g} ms); "
                     f"target ratio ≥ {report['target_throughput_ratio']:g}; accuracy {report['accuracy']:.0%}")
    return table
