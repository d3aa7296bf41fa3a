"""The engine's fine stage: candidates answer concurrently, the CRM scores the usable answers, the best is
kept (ties: the coarse stage's order), a policy may keep another, and a budget refusal is never a call."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from reso.agents.adapters.failures import FailureKind
from reso.agents.selection.selector import Candidate
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.escalation import Cascade, FixedK
from reso.graphs.fine_stage import Judged, run_fine_stage
from reso.graphs.settings import ReSoSettings
from reso.reward.base import Score, ScoreItem, Scorer
from tests.engine_fakes import ScriptedAnswerer, scripted_team

SUBTASK = "Step A: how many apples?"


class _ByText(Scorer):
    """Scores an answer by a table keyed by its text."""

    name = "by-text"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(self.table[item.answer]) for item in items]


IN_FLIGHT: list[str] = []
TOGETHER = 3


class _Together(ScriptedAnswerer):
    """Answers only once TOGETHER calls (of any instance) are in flight at once, else gives up."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        IN_FLIGHT.append(self.answers[self._key(messages)])
        for _ in range(500):  # about five seconds of event-loop turns, never a wall-clock assertion
            if len(IN_FLIGHT) >= TOGETHER:
                return self._result(self._key(messages))
            await asyncio.sleep(0.01)
        raise TimeoutError("the candidates did not answer concurrently")


def _stage(answers: dict[str, str], scores: dict[str, float], *, budget: Budget | None = None,
           policy: Any = None, models: dict[str, Any] | None = None) -> tuple[Judged, dict[str, Any]]:
    models = models or {agent_id: ScriptedAnswerer(answers={SUBTASK: text}, calls=[])
                        for agent_id, text in answers.items()}
    team = scripted_team(models, lambda subtask: [], scorer=_ByText(scores))
    offered = [Candidate(team.agent(agent_id), 1.0 - n / 10) for n, agent_id in enumerate(models)]
    run = RunContext(settings=ReSoSettings().replace({"asking.k": len(offered)}), team=team)
    judged = asyncio.run(run_fine_stage(run, offered, policy or FixedK(), prompt=SUBTASK, instruction=SUBTASK,
                                        context_text="", group="0", reference=None, budget=budget or Budget()))
    return judged, models


def test_candidates_answer_concurrently_and_the_best_score_is_kept():
    IN_FLIGHT.clear()
    models = {agent_id: _Together(answers={SUBTASK: text}, calls=[])
              for agent_id, text in {"x": "\\boxed{1}", "y": "\\boxed{2}", "z": "\\boxed{3}"}.items()}
    judged, _ = _stage({}, {"\\boxed{1}": 0.2, "\\boxed{2}": 0.9, "\\boxed{3}": 0.9}, models=models)
    assert sorted(IN_FLIGHT) == ["\\boxed{1}", "\\boxed{2}", "\\boxed{3}"]
    assert [c.agent.id for c in judged.candidates] == ["x", "y", "z"]
    assert judged.values == ["1", "2", "3"] and [judged.scores[i].value for i in range(3)] == [0.2, 0.9, 0.9]
    assert judged.kept == 1, "a tie keeps the candidate the coarse stage ranked first"


def test_an_answer_without_a_final_value_is_kept_only_when_nothing_else_is_usable():
    judged, _ = _stage({"x": "no idea", "y": "\\boxed{4}"}, {"no idea": 0.99, "\\boxed{4}": 0.1})
    assert judged.values == [None, "4"] and judged.kept == 1


def test_a_call_the_budget_refuses_is_recorded_never_made_and_not_scored():
    judged, models = _stage({"x": "\\boxed{1}"}, {"\\boxed{1}": 1.0}, budget=Budget(max_tokens=0))
    (answer,) = judged.answers
    assert answer.failure is FailureKind.BUDGET_EXCEEDED and answer.error.startswith("BudgetExceeded: token budget")
    assert models["x"].calls == [] and judged.scores == {} and judged.kept is None


def test_the_policy_may_name_the_answer_to_keep():
    # The cascade: the cheap two disagree, so the third answers and its answer is kept despite its score.
    judged, _ = _stage({"a": "\\boxed{1}", "b": "\\boxed{2}", "c": "\\boxed{3}"},
                       {"\\boxed{1}": 0.9, "\\boxed{2}": 0.8, "\\boxed{3}": 0.1}, policy=Cascade(cheap=2))
    assert [c.agent.id for c in judged.candidates] == ["a", "b", "c"] and judged.kept == 2


@pytest.mark.parametrize("agreeing", [True, False])
def test_a_cascade_asks_the_strong_model_only_on_disagreement(agreeing):
    second = "\\boxed{1}" if agreeing else "\\boxed{2}"
    judged, models = _stage({"a": "\\boxed{1}", "b": second, "c": "\\boxed{3}"},
                            {"\\boxed{1}": 0.5, "\\boxed{2}": 0.5, "\\boxed{3}": 0.5}, policy=Cascade(cheap=2))
    assert (models["c"].calls == []) is agreeing
    assert len(judged.answers) == (2 if agreeing else 3)
