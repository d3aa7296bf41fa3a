"""Pausing after planning for a person to edit the plan, resuming, and resuming from a checkpoint file."""

from __future__ import annotations

import asyncio

import pytest

from reso.graphs.api import ReSo
from tests.engine_fakes import ScriptedAnswerer, scripted_team
from tests.unit_tests.test_graph_engine import DIAMOND, _choose


def _team():
    solver = ScriptedAnswerer(answers={"Step A": "\\boxed{3}", "Step B": "\\boxed{5}", "Step C": "\\boxed{6}",
                                       "Step D": "\\boxed{7}"}, calls=[])
    return scripted_team({"solver": solver}, _choose), solver


def test_review_pauses_after_planning_and_resumes_with_the_proposed_plan():
    team, solver = _team()
    reso = ReSo({"plan.review": True}, team=team)
    paused = reso.solve("diamond", plan=DIAMOND)
    assert paused.status == "awaiting_review" and paused.answer is None
    assert [step["id"] for step in paused.plan] == ["a", "b", "c", "final"]
    assert paused.thread_id and solver.calls == []  # nothing ran before the review
    done = reso.resume(paused.thread_id)
    assert done.status == "done" and done.answer == "30"


def test_review_resumes_with_an_edited_plan():
    team, _ = _team()
    reso = ReSo({"plan.review": True}, team=team)
    paused = reso.solve("diamond", plan=DIAMOND)
    edited = [
        {"id": "a", "instruction": "Step A: how many apples?", "depends_on": []},
        {"id": "d", "instruction": "Step D: how many dates?", "depends_on": []},
        {"id": "final", "instruction": "Please calculate the value of Answer[a]*Answer[d].",
         "depends_on": ["a", "d"]},
    ]
    done = reso.resume(paused.thread_id, plan=edited)
    assert done.answer == "21"
    assert [step.id for step in done.steps] == ["a", "d", "final"]
    assert "plan edited by a person" in done.notes


def test_resuming_a_thread_with_nothing_paused_is_refused():
    team, _ = _team()
    reso = ReSo({"plan.review": True}, team=team)
    with pytest.raises(ValueError, match="no paused run"):
        reso.resume("never-started")


def test_checkpointed_runs_are_saved_under_their_thread(tmp_path):
    team, solver = _team()
    reso = ReSo(team=team, checkpoint_path=tmp_path / "runs.sqlite")
    result = reso.solve("diamond", plan=DIAMOND, thread_id="t1")
    assert result.answer == "30" and result.thread_id == "t1"

    async def saved_state():
        async with reso._graph() as graph:
            return (await graph.aget_state({"configurable": {"thread_id": "t1"}})).values

    values = asyncio.run(saved_state())
    assert values["answer"] == "30" and set(values["steps"]) == {"a", "b", "c", "final"}
