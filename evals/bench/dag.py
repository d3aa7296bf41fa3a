"""`reso bench dag`: how close the engine's wall time gets to each question's critical path.

Task DAGs are drawn with the paper's generator (`reso.evals.synth.mas.random_dag`) at the MATH-MAS sizes
(Easy / Medium / Hard: 3 / 5 / 7 sub-questions plus a final step that integrates all of them) and run
through the real engine — the ReSo API, the reputation selector over a FAISS profile index, the consensus CRM
and an in-memory DADB in training mode — with fake agents that only wait. Each agent's latency for each
subtask is drawn beforehand from a log-normal, so the eager and waves schedules of one question face the
same draws. Per question the critical path and the sequential time (the authors' release runs steps one
after another) come from that run's own measured step durations, so selection, scoring and the DADB
update on the path count against the engine only where they add to the wall time.

A second phase runs zero-latency agents on many Hard-size questions: the wall time per subtask is then
the engine's own overhead (planning from a given plan, graph build and compilation, selection, scoring,
DADB update, LangGraph scheduling).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from reso.agents.adapters.prompting import current_subtask
from reso.agents.dadb.base import Mode
from reso.agents.pool import Pool, pool_from_dict
from reso.evals.synth.mas import random_dag

LEVELS: dict[str, int] = {"easy": 3, "medium": 5, "hard": 7}
"""Sub-questions per MATH-MAS difficulty level (the final integration step comes on top)."""

SCHEDULES = ("eager", "waves")
FAKE_ANSWER = "The value is \\boxed{1}"
_ROLES = ["Algebra", "Arithmetic", "Geometry", "Probability", "Number theory", "Calculus"]


class LatencyChatModel(BaseChatModel):
    """A chat model that waits a pre-drawn time for the current subtask, then answers `FAKE_ANSWER`.

    `latencies` maps a subtask's text to seconds; a subtask not in it waits `default_s`, or is an error
    when `default_s` is None (a benchmark bug, never a silent zero).
    """

    latencies: dict[str, float] = Field(default_factory=dict)
    default_s: float | None = None
    tokens: tuple[int, int] = (120, 30)

    @property
    def _llm_type(self) -> str:
        return "latency-fake"

    def _latency(self, messages: Sequence[BaseMessage]) -> float:
        subtask = current_subtask(str(messages[-1].content))
        found = self.latencies.get(subtask, self.default_s)
        if found is None:
            raise LookupError(f"no latency drawn for subtask {subtask[:60]!r}")
        return found

    def _result(self) -> ChatResult:
        usage = {"input_tokens": self.tokens[0], "output_tokens": self.tokens[1], "total_tokens": sum(self.tokens)}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=FAKE_ANSWER, usage_metadata=usage))])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        time.sleep(self._latency(messages))
        return self._result()

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        await asyncio.sleep(self._latency(messages))
        return self._result()


def bench_pool(n_agents: int) -> Pool:
    """A pool of `n_agents` fake agents with distinct roles, profiles and prices."""
    if n_agents < 1:
        raise ValueError(f"the pool needs at least one agent, got {n_agents}")
    return pool_from_dict({
        "name": "bench-dag",
        "agents": [{
            "id": f"fake-{i}",
            "model": {"spec": f"fake:model-{i}", "price_in": 0.1 * (i + 1), "price_out": 0.4 * (i + 1)},
            "role": _ROLES[i % len(_ROLES)],
            "profile": f"Solves {_ROLES[i % len(_ROLES)].lower()} sub-questions step by step (agent {i}).",
        } for i in range(n_agents)],
    })


def draw_plan(n_sub: int, rng: random.Random, question: int) -> list[dict[str, Any]]:
    """A plan of `n_sub` sub-questions wired by the paper's generator, plus the final integration step."""
    order, parents = random_dag(n_sub, rng)
    steps = [{
        "id": str(node),
        "instruction": f"Question {question}, sub-question {node}: compute quantity {node}"
                       + (f" from {', '.join(f'Answer[{p}]' for p in parents[node])}." if parents[node] else "."),
        "depends_on": [str(p) for p in parents[node]],
    } for node in order]
    steps.append({
        "id": "final",
        "instruction": f"Question {question}: please calculate the product of "
                       + ", ".join(f"Answer[{node}]" for node in range(n_sub)) + ".",
        "depends_on": [str(node) for node in range(n_sub)],
    })
    return steps


@dataclass(frozen=True)
class QuestionTiming:
    """One question run: its wall time and the durations measured for its steps (seconds)."""

    wall_s: float
    critical_s: float
    sequential_s: float
    steps: int

    @property
    def wall_over_critical(self) -> float:
        return self.wall_s / self.critical_s

    @property
    def speedup_vs_sequential(self) -> float:
        return self.sequential_s / self.wall_s

    @property
    def ideal_speedup(self) -> float:
        return self.sequential_s / self.critical_s


class DagBench:
    """The engine under test: a team of latency-faking agents with the real selector, CRM and DADB."""

    def __init__(self, *, n_agents: int = 6, k: int = 2, scorer: str = "consensus",
                 embedder: str = "hash:256", seed: int = 0) -> None:
        from reso.agents.dadb.sqlite import DADB
        from reso.agents.selection.config import SelectorConfig
        from reso.agents.selection.embeddings import load_embedder
        from reso.agents.selection.selector import ReputationSelector
        from reso.graphs.api import ReSo
        from reso.graphs.plan_settings import PlannerName
        from reso.graphs.team import Team
        from reso.reward.registry import build_scorer

        self.seed = seed
        self.description = {"agents": n_agents, "k": k, "scorer": scorer, "selector": "reputation",
                            "embedder": embedder, "dadb": "memory, train", "seed": seed}
        self.pool = bench_pool(n_agents)
        self.models = {agent.id: LatencyChatModel() for agent in self.pool}
        dadb = DADB(None, mode=Mode.TRAIN)
        selector = ReputationSelector(self.pool, dadb, load_embedder(embedder), SelectorConfig(top_m=n_agents),
                                      seed=seed)
        self.team = Team(pool=self.pool, models=self.models, selector=selector,
                         scorer=build_scorer(scorer), dadb=dadb)
        self.resos = {schedule: ReSo({"asking.k": k, "plan.planner": PlannerName.GIVEN, "plan.schedule": schedule,
                                      "reward.scorer": scorer, "selection.embedder": embedder},
                                     team=self.team, mode=Mode.TRAIN, seed=seed)
                      for schedule in SCHEDULES}

    def set_latencies(self, plan: Sequence[Mapping[str, Any]], rng: random.Random, *,
                      median_s: float, sigma: float) -> None:
        """Draw every agent's latency for every step of `plan` (replacing earlier draws)."""
        mu = math.log(median_s) if median_s > 0 else None
        for model in self.models.values():
            model.latencies = {
                step["instruction"]: (rng.lognormvariate(mu, sigma) if mu is not None else 0.0) for step in plan
            }

    async def run(self, plan: Sequence[Mapping[str, Any]], schedule: str, question: int) -> QuestionTiming:
        """Solve one question on `plan` and time it against its own step durations."""
        from reso.graphs.dag import TaskDAG
        from reso.graphs.run_records import RunStatus, StepStatus

        started = time.perf_counter()
        result = await self.resos[schedule].asolve(f"bench question {question}", plan=plan)
        wall = time.perf_counter() - started
        if result.status != RunStatus.DONE:
            failed = {step.id: step.notes or [c.error for c in step.candidates if c.error]
                      for step in result.steps if step.status != StepStatus.DONE}
            raise RuntimeError(f"question {question} ({schedule}) ended {result.status}: {failed}")
        durations = {step.id: step.latency_s for step in result.steps}
        critical = TaskDAG.from_steps(plan).critical_path(durations)
        return QuestionTiming(wall_s=wall, critical_s=critical, sequential_s=sum(durations.values()),
                              steps=len(durations))


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def summarise(timings: Sequence[QuestionTiming]) -> dict[str, float]:
    """Medians over questions of the ratios, plus the median times in milliseconds."""
    return {
        "wall_over_critical": _median([t.wall_over_critical for t in timings]),
        "speedup_vs_sequential": _median([t.speedup_vs_sequential for t in timings]),
        "max_wall_over_critical": max(t.wall_over_critical for t in timings),
        "median_wall_ms": 1000 * _median([t.wall_s for t in timings]),
        "median_critical_ms": 1000 * _median([t.critical_s for t in timings]),
    }


async def run_levels(bench: DagBench, *, questions: int, median_s: float, sigma: float,
                     seed: int) -> dict[str, Any]:
    """Every level's questions under both schedules, eager first, on the same latency draws."""
    levels: dict[str, Any] = {}
    for level_index, (level, n_sub) in enumerate(LEVELS.items()):
        rng = random.Random(f"{seed}:{level_index}")
        by_schedule: dict[str, list[QuestionTiming]] = {schedule: [] for schedule in SCHEDULES}
        for question in range(questions):
            plan = draw_plan(n_sub, rng, question)
            bench.set_latencies(plan, rng, median_s=median_s, sigma=sigma)
            for schedule in SCHEDULES:
                by_schedule[schedule].append(await bench.run(plan, schedule, question))
        eager, waves = by_schedule["eager"], by_schedule["waves"]
        levels[level] = {
            **summarise(eager),
            "ideal_speedup": _median([t.ideal_speedup for t in eager]),
            "subtasks": n_sub + 1,
            "questions": questions,
            "waves": {**summarise(waves), "ideal_speedup": _median([t.ideal_speedup for t in waves])},
        }
    return levels


async def warm_up(bench: DagBench, *, questions: int = 3) -> None:
    """Run a few zero-latency questions under both schedules, so first-call costs (imports, caches) are
    paid before anything is timed."""
    rng = random.Random("warm-up")
    for model in bench.models.values():
        model.latencies, model.default_s = {}, 0.0
    try:
        for question in range(questions):
            plan = draw_plan(LEVELS["hard"], rng, question)
            for schedule in SCHEDULES:
                await bench.run(plan, schedule, question)
    finally:
        for model in bench.models.values():
            model.default_s = None


async def measure_overhead(bench: DagBench, *, questions: int, seed: int) -> dict[str, float]:
    """Wall time per subtask with zero-latency agents on Hard-size questions (eager schedule).

    The process CPU time per subtask is reported too: on a shared machine the wall time also holds the
    time other processes had the cores, the CPU time does not.
    """
    rng = random.Random(f"{seed}:overhead")
    plans = [draw_plan(LEVELS["hard"], rng, question) for question in range(questions)]
    for model in bench.models.values():
        model.latencies, model.default_s = {}, 0.0
    subtasks = 0
    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        for question, plan in enumerate(plans):
            subtasks += (await bench.run(plan, "eager", question)).steps
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    finally:
        for model in bench.models.values():
            model.default_s = None
    return {"overhead_ms_per_subtask": 1000 * wall / subtasks,
            "overhead_cpu_ms_per_subtask": 1000 * cpu / subtasks,
            "overhead_ms_per_question": 1000 * wall / questions}


async def run_bench(bench: DagBench | None = None, *, questions: int = 30, median_ms: float = 40.0,
                    sigma: float = 0.6, overhead_questions: int = 200, profile: Any = None) -> dict[str, Any]:
    """The whole benchmark; returns the JSON report.

    Args:
        bench: The engine under test; `DagBench()` (6 agents, k=2, consensus CRM, seed 0) when None.
        questions: Questions per level (each run under both schedules).
        median_ms: Median agent latency; `sigma` is the log-normal's shape.
        overhead_questions: Hard-size questions of the zero-latency overhead phase.
        profile: A `cProfile.Profile` enabled around the overhead phase only, or None.
    """
    if questions < 1 or overhead_questions < 1:
        raise ValueError("questions and overhead questions must be at least 1")
    if median_ms < 0 or sigma < 0:
        raise ValueError("median latency and sigma must be >= 0")
    bench = bench or DagBench()
    seed = bench.seed
    await warm_up(bench)
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    levels = await run_levels(bench, questions=questions, median_s=median_ms / 1000, sigma=sigma, seed=seed)
    if profile is not None:
        profile.enable()
    try:
        overhead = await measure_overhead(bench, questions=overhead_questions, seed=seed)
    finally:
        if profile is not None:
            profile.disable()
    return {
        "levels": levels,
        **overhead,
        "targets": {"wall_over_critical_max": 1.10, "overhead_ms_per_subtask_max": 3.0},
        "config": {"questions": questions, "median_ms": median_ms, "sigma": sigma,
                   "overhead_questions": overhead_questions, **bench.description},
        "machine": {"cpus": os.cpu_count(), "load_avg_1m_at_start": load_before},
    }


def render_table(report: Mapping[str, Any]) -> Any:
    """The report as a rich table: one row per level, eager and waves side by side."""
    from rich.table import Table

    table = Table(title="reso bench dag: wall time vs critical path and vs sequential")
    for column in ("level", "steps", "cp\nms", "eager\nwall/cp", "waves\nwall/cp",
                   "eager\nspeedup", "waves\nspeedup", "ideal\nspeedup"):
        table.add_column(column, justify="left" if column == "level" else "right")
    for level, row in report["levels"].items():
        table.add_row(level, str(row["subtasks"]), f"{row['median_critical_ms']:.0f}",
                      f"{row['wall_over_critical']:.3f}", f"{row['waves']['wall_over_critical']:.3f}",
                      f"{row['speedup_vs_sequential']:.2f}×", f"{row['waves']['speedup_vs_sequential']:.2f}×",
                      f"{row['ideal_speedup']:.2f}×")
    targets = report["targets"]
    table.caption = (f"Medians over {report['config']['questions']} questions per level; cp = critical path; "
                     f"speedups are over sequential execution; target eager wall/cp ≤ "
                     f"{targets['wall_over_critical_max']:.2f}.\n"
                     f"Engine overhead (zero-latency agents, Hard): {report['overhead_ms_per_subtask']:.2f} ms "
                     f"wall, {report['overhead_cpu_ms_per_subtask']:.2f} ms CPU per subtask "
                     f"(target ≤ {targets['overhead_ms_per_subtask_max']:g} ms).")
    return table
