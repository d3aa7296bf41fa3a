"""Circuit breakers: open after N consecutive failures, probe after the cool-down, close on success; the
engine stops selecting an agent whose endpoint always fails, even with a frozen DADB."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from dataclasses import dataclass, field

import pytest

from reso.agents.adapters.answers import AgentAnswer
from reso.agents.adapters.failures import FailureKind
from reso.agents.adapters.faults import FaultConfig, FaultyChatModel
from reso.agents.adapters.health import Health, classify
from reso.agents.adapters.retry import RetryPolicy
from reso.agents.pool import Pool
from reso.agents.selection.selector import Candidate
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.dag import StepRole
from reso.graphs.settings import ReSoSettings
from reso.graphs.subtask import ProgressWriter, Subtask
from reso.reward.answers import extract_answer
from tests.engine_fakes import HasValueScorer, ScriptedAnswerer, scripted_team


@dataclass
class _Question:
    """A question's run as a subtask sees it (`reso.graphs.subtask.QuestionRun`), for subtasks run alone."""

    run: RunContext
    budget: Budget = field(default_factory=Budget)
    origin: float = field(default_factory=time.monotonic)
    write: ProgressWriter | None = None


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _has_answer(text: str) -> bool:
    return extract_answer(text) is not None


def test_breaker_opens_after_n_consecutive_failures_only() -> None:
    health = Health(threshold=3, cooldown_s=10.0, clock=Clock())
    for ok in (False, False, True, False, False):  # a success in between resets the count
        health.record("a", ok)
    assert health.state("a") == "closed" and health.unavailable() == set()
    health.record("a", False)
    assert health.state("a") == "open" and health.unavailable() == {"a"}


def test_breaker_closes_after_a_successful_probe() -> None:
    clock = Clock()
    health = Health(threshold=2, cooldown_s=10.0, clock=clock)
    health.record("a", False)
    health.record("a", False)
    clock.now += 9.9
    assert health.unavailable() == {"a"}
    clock.now += 0.2
    assert health.state("a") == "half_open"
    assert health.unavailable() == set()  # one selection may take it as the probe...
    assert health.unavailable() == {"a"}  # ...the others wait for the probe's outcome
    health.record("a", True)
    assert health.state("a") == "closed" and health.unavailable() == set()


def test_a_failed_probe_opens_it_again_for_longer() -> None:
    clock = Clock()
    health = Health(threshold=1, cooldown_s=10.0, max_cooldown_s=15.0, clock=clock)
    health.record("a", False)
    clock.now += 10.0
    assert health.unavailable() == set()
    health.record("a", False)
    assert health.state("a") == "open"
    clock.now += 14.9
    assert health.unavailable() == {"a"}  # 15 s now (doubled, capped)
    clock.now += 0.1
    assert health.state("a") == "half_open"
    assert health.snapshot()["a"]["trips"] == 2


def test_failures_that_arrive_while_open_do_not_extend_it() -> None:
    clock = Clock()
    health = Health(threshold=1, cooldown_s=10.0, clock=clock)
    health.record("a", False)
    clock.now += 5.0
    health.record("a", False)  # a call that started before the breaker opened
    clock.now += 5.0
    assert health.state("a") == "half_open"


def test_agents_of_one_endpoint_share_a_breaker() -> None:
    from reso.agents.pool import pool_from_dict

    pool = pool_from_dict({"models": [{"spec": "fake:one", "price_in": 0, "price_out": 0},
                                      {"spec": "fake:two", "price_in": 0, "price_out": 0}],
                           "roles": ["Algebra", "Geometry"]})
    health = Health.for_pool(pool, threshold=2, clock=Clock())
    one = [agent.id for agent in pool if agent.model.spec == "fake:one"]
    health.record(one[0], False)
    health.record(one[1], False)
    assert health.unavailable() == set(one)


@pytest.mark.parametrize(("answer", "outcome"), [
    (AgentAnswer("a", "so \\boxed{4}"), "success"),
    (AgentAnswer("a", ""), "failure"),
    (AgentAnswer("a", "qzx ~!@ lorem"), "failure"),
    (AgentAnswer("a", "", error="InternalServerError: boom"), "failure"),
    (AgentAnswer("a", "", error="TimeoutError: no answer within 1 s", failure=FailureKind.TIMEOUT), "failure"),
    (AgentAnswer("a", "", error="ToolDeclined: not a calculation", failure=FailureKind.TOOL_DECLINED), "neutral"),
    (AgentAnswer("a", "", error="NoRecordingError: no recording", failure=FailureKind.NO_RECORDING), "neutral"),
    (AgentAnswer("a", "", error="BudgetExceeded: token budget", failure=FailureKind.BUDGET_EXCEEDED), "neutral"),
    (AgentAnswer("a", "", error="BudgetExceeded: run token budget", failure=FailureKind.RUN_BUDGET_EXCEEDED),
     "neutral"),
    # The kind decides, not the words: a plain error whose message names a decline still counts against.
    (AgentAnswer("a", "", error="ValueError: ToolDeclined upstream"), "failure"),
])
def test_what_counts_against_an_endpoint(answer: AgentAnswer, outcome: str) -> None:
    assert classify(answer, _has_answer) == outcome


@dataclass
class RankedSelector:
    """Always prefers `dead`, then `good`; honours `exclude` as the UCB selector does; learns nothing."""

    pool: Pool
    picks: list[str] = field(default_factory=list)

    def select(self, subtask: str, k: int | None = None, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Candidate]:
        ids = [i for i in ("dead", "good") if i not in exclude][: k or 1]
        self.picks.extend(ids)
        return [Candidate(self.pool.get(i), 1.0) for i in ids]

    def update(self, *args, **kwargs) -> None:
        raise AssertionError("test mode must not update the DADB")


def test_the_engine_stops_selecting_an_agent_whose_endpoint_always_fails() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    answerer = ScriptedAnswerer(answers={"Compute": "it is \\boxed{5}"})
    dead = FaultyChatModel(inner=answerer, faults=FaultConfig(rate=1.0, kinds=("server_error",)))
    good = ScriptedAnswerer(answers={"Compute": "it is \\boxed{5}"}, calls=[])
    team = scripted_team({"dead": dead, "good": good}, choose=lambda s: [], scorer=HasValueScorer())
    clock = Clock()
    selector = RankedSelector(team.pool)
    team.selector = selector
    team.health = Health(threshold=3, cooldown_s=60.0, clock=clock)
    team.retry = RetryPolicy(attempts=2, sleep=sleep)
    run_context = RunContext(settings=ReSoSettings().replace({"asking.rule": "fixed", "asking.k": 1}, mode="test"), team=team)

    def run(n: int) -> list:
        return [asyncio.run(Subtask(id=f"s{i}", instruction="Compute 2 + 3.", role=StepRole.SUB_QUESTION).run(_Question(run_context)))
                for i in range(n)]

    first = run(6)
    assert selector.picks == ["dead"] * 3 + ["good"] * 3
    assert [r.status for r in first] == ["failed"] * 3 + ["done"] * 3
    assert dead.calls == 6  # three calls, each retried once
    assert [c.retries for r in first[:3] for c in r.candidates] == [1, 1, 1]
    assert waits and len(waits) == 3
    clock.now += 61.0  # cool-down over: one probe, which fails, and the endpoint is shut out again
    selector.picks.clear()
    run(3)
    assert selector.picks == ["dead", "good", "good"]
