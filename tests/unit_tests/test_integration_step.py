"""The plan marks its integration step itself (`TaskDAG.role`): whatever a planner calls its final step, the
coarse stage routes it to the pool's exact tool, and a one-step plan's lone step is left to the selector."""

from __future__ import annotations

import dataclasses

import pytest
from langchain_core.messages import AIMessage

from reso.graphs.api import ReSo
from reso.graphs.dag import StepRole, TaskDAG
from tests.engine_fakes import ScriptedAnswerer, scripted_team
from tests.fakes import ScriptedChatModel, usage

# What an LLM planner may write: its final step is not called "final".
LLM_PLAN = [
    {"id": "1", "instruction": "Step A: how many apples?", "depends_on": []},
    {"id": "2", "instruction": "Step B: how many bananas?", "depends_on": []},
    {"id": "3", "instruction": "Please calculate the value of Answer[1]*Answer[2].", "depends_on": ["1", "2"]},
]


def _planner_model(steps: list[dict]) -> ScriptedChatModel:
    """A tool-calling chat model that answers the planner's request with `steps`."""
    call = AIMessage(content="", tool_calls=[{"name": "Plan", "args": {"steps": steps}, "id": "call_1"}],
                     usage_metadata=usage(40, 25))
    return ScriptedChatModel(script=[call])


def test_the_dag_names_each_steps_role_whatever_the_ids() -> None:
    dag = TaskDAG.from_steps(LLM_PLAN)
    assert [dag.role(step) for step in dag.ids] == [StepRole.SUB_QUESTION, StepRole.SUB_QUESTION,
                                                    StepRole.INTEGRATION]
    assert TaskDAG.single_step("How many apples?").role("final") is StepRole.WHOLE_QUESTION
    with pytest.raises(KeyError):
        dag.role("final")


def test_an_llm_plans_last_step_goes_to_the_exact_tool_whatever_its_id() -> None:
    # The selector offers only the solver, which has no answer for the integration step.
    solver = ScriptedAnswerer(answers={"Step A": "\\boxed{3}", "Step B": "\\boxed{5}"}, calls=[])
    team = dataclasses.replace(scripted_team({"solver": solver}, lambda subtask: ["solver"]), planner_model=_planner_model(LLM_PLAN))
    result = ReSo({"plan.planner": "llm", "asking.k": 1}, team=team).solve("How many fruits, apples times bananas?")
    assert [step.id for step in result.steps] == ["1", "2", "3"]
    last = result.steps[-1]
    assert [candidate.agent_id for candidate in last.candidates] == ["calc"]
    assert last.value == "15" and result.answer == "15"
    assert [step.agent for step in result.steps[:2]] == ["solver", "solver"]
