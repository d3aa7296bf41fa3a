"""The LLM planner with scripted chat models: valid, malformed, cyclic and failing outputs; `auto`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from reso.graphs.dag import PlanError
from reso.graphs.planners import (
    NO_MODEL_NOTE,
    AutoPlanner,
    LLMPlanner,
    PlannerConfigError,
    StructuralPlanner,
    make_planner,
)
from tests.fakes import ScriptedChatModel, usage

QUESTION = "A shop sells 3 apples for $2 and 4 pears for $3. What do 6 apples and 8 pears cost?"

VALID = [
    {"id": "1", "instruction": "Cost of 6 apples at 3 for $2.", "depends_on": []},
    {"id": "2", "instruction": "Cost of 8 pears at 4 for $3.", "depends_on": []},
    {"id": "3", "instruction": "Add Answer[1] and Answer[2].", "depends_on": ["1", "2"]},
]
CYCLIC = [
    {"id": "1", "instruction": "Needs Answer[3].", "depends_on": ["3"]},
    {"id": "2", "instruction": "Cost of 8 pears.", "depends_on": []},
    {"id": "3", "instruction": "Add Answer[1] and Answer[2].", "depends_on": ["1", "2"]},
]

MAS_QUESTION = (
    "The following is a complex question composed of multiple sub-questions:\n\n"
    "Compute 2+3.. The answer is recorded as Answer[0]\n\n"
    "Multiply UNK_1(a constant calculated by adding the sum of Answer[0] to the number (1.00). ) by 2.. "
    "The answer is recorded as Answer[1]\n\n"
    "Please use the answers to the above questions to perform the following calculations:\n"
    "Please calculate the value of Answer[0]*Answer[1]."
)


def tool_plan(steps: Any, input_tokens: int = 40, output_tokens: int = 25) -> AIMessage:
    """A structured-output answer: a `Plan` tool call, as a tool-calling model returns it."""
    return AIMessage(content="", tool_calls=[{"name": "Plan", "args": {"steps": steps}, "id": "call_1"}],
                     usage_metadata=usage(input_tokens, output_tokens))


def text_model(*replies: str) -> GenericFakeChatModel:
    """A chat model without tool calling: the planner must ask for JSON in text."""
    return GenericFakeChatModel(messages=iter([AIMessage(content=reply) for reply in replies]))


def feedback_of(call: list) -> str:
    """The retry feedback of one recorded call (its last human message)."""
    assert len(call) == 3, "a retry carries the feedback as a third message"
    return call[-1].text


def test_valid_structured_plan_on_the_first_attempt() -> None:
    model = ScriptedChatModel(script=[tool_plan(VALID)])
    planner = LLMPlanner(model)
    result = planner.plan_with_report(QUESTION)
    assert planner.structured
    assert result.dag.to_steps() == VALID
    assert (result.attempts, result.errors, result.notes, result.fallback) == (1, [], [], False)
    assert (result.input_tokens, result.output_tokens) == (40, 25)
    assert result.planner == "llm"
    system, human = model.calls[0]
    assert isinstance(system, SystemMessage) and "depends_on" in system.text
    assert isinstance(human, HumanMessage) and QUESTION in human.text


def test_malformed_output_is_fed_back_and_the_retry_succeeds() -> None:
    model = ScriptedChatModel(script=['{"steps": [{"id": "1", "instruction": "oops"', tool_plan(VALID)])
    result = LLMPlanner(model).plan_with_report(QUESTION)
    assert result.dag.to_steps() == VALID
    assert result.attempts == 2 and not result.fallback
    assert len(result.errors) == 1 and "no complete JSON" in result.errors[0]
    feedback = feedback_of(model.calls[1])
    assert "not valid" in feedback and "no complete JSON" in feedback
    assert '{"steps": [{"id": "1", "instruction": "oops"' in feedback


def test_cyclic_plan_is_rejected_with_the_cycle_named() -> None:
    model = ScriptedChatModel(script=[tool_plan(CYCLIC), tool_plan(VALID)])
    result = LLMPlanner(model).plan_with_report(QUESTION)
    assert result.dag.to_steps() == VALID and result.attempts == 2
    assert "cycle" in result.errors[0] and "'1' needs '3'" in result.errors[0]
    feedback = feedback_of(model.calls[1])
    assert "cycle" in feedback and '"Needs Answer[3]."' in feedback


def test_dangling_references_are_repaired_in_one_attempt() -> None:
    dangling = [dict(VALID[0], depends_on=["7"]), VALID[1], dict(VALID[2], depends_on=["1", "2", "3"])]
    result = LLMPlanner(ScriptedChatModel(script=[tool_plan(dangling)])).plan_with_report(QUESTION)
    assert result.dag.to_steps() == VALID
    assert result.attempts == 1 and result.errors == []
    assert any("unknown step '7'" in note for note in result.notes)
    assert any("itself" in note for note in result.notes)


def test_schema_errors_are_described_per_field() -> None:
    broken = [{"id": "1"}, {"id": 2, "instruction": "two", "depends_on": [1]}]
    model = ScriptedChatModel(script=[tool_plan(broken), tool_plan(VALID)])
    result = LLMPlanner(model).plan_with_report(QUESTION)
    assert "steps.0.instruction: Field required" in result.errors[0]
    assert "\n" not in result.errors[0]


def test_json_without_steps_is_explained() -> None:
    model = text_model('{"answer": 5}', json.dumps({"plan": VALID}))
    result = LLMPlanner(model).plan_with_report(QUESTION)
    assert result.errors == ["attempt 1: the JSON object has no 'steps' list"]
    assert result.dag.to_steps() == VALID


def test_integer_ids_are_accepted() -> None:
    numbered = [{"id": 1, "instruction": "one"}, {"id": 2, "instruction": "two", "depends_on": [1]}]
    result = LLMPlanner(ScriptedChatModel(script=[tool_plan(numbered)])).plan_with_report(QUESTION)
    assert result.dag.ids == ["1", "2"] and result.dag.parents("2") == ["1"]


def test_always_invalid_falls_back_to_a_single_step() -> None:
    model = ScriptedChatModel(script=["no plan here", tool_plan(CYCLIC), tool_plan([])])
    planner = LLMPlanner(model, max_retries=2)
    report = planner.plan_with_report(QUESTION)
    assert report.dag.to_steps() == [{"id": "final", "instruction": QUESTION, "depends_on": []}]
    assert report.fallback and report.attempts == 3 and model.call_count == 3
    assert len(report.errors) == 3
    assert "single step" in report.notes[0]
    assert "at least 1 item" in report.errors[2] or "at least one step" in report.errors[2]


def test_no_retries_means_one_attempt() -> None:
    model = ScriptedChatModel(script=["nothing"])
    result = LLMPlanner(model, max_retries=0).plan_with_report(QUESTION)
    assert result.fallback and result.attempts == 1 and model.call_count == 1


def test_a_failing_model_call_is_recorded_and_retried_without_feedback() -> None:
    model = ScriptedChatModel(script=[TimeoutError("provider timed out\nsecond line"), tool_plan(VALID)])
    result = LLMPlanner(model).plan_with_report(QUESTION)
    assert result.dag.to_steps() == VALID and result.attempts == 2
    assert result.errors == ["attempt 1: the model call failed: TimeoutError: provider timed out"]
    assert len(model.calls[1]) == 2


def test_too_many_steps_count_as_invalid() -> None:
    model = ScriptedChatModel(script=[tool_plan(VALID), tool_plan(VALID[:1])])
    result = LLMPlanner(model, max_steps=2).plan_with_report(QUESTION)
    assert "3 steps; use at most 2" in result.errors[0]
    assert result.dag.ids == ["1"]


def test_a_structured_call_answered_in_text_is_read_from_the_text() -> None:
    text = "Here is the plan:\n```json\n" + json.dumps({"steps": VALID}) + "\n```\nGood luck!"
    result = LLMPlanner(ScriptedChatModel(script=[text])).plan_with_report(QUESTION)
    assert result.dag.to_steps() == VALID and result.attempts == 1


def test_text_mode_for_models_without_tool_calling() -> None:
    model = text_model("Sure. " + json.dumps({"steps": VALID}) + " Hope this helps.")
    planner = LLMPlanner(model)
    assert not planner.structured
    assert "Reply with one JSON object" in planner.messages(QUESTION)[0].text
    assert planner.plan(QUESTION).to_steps() == VALID


def test_text_mode_accepts_a_bare_list_and_rejects_truncated_json() -> None:
    truncated = json.dumps(VALID)[:-20]
    planner = LLMPlanner(text_model(truncated, json.dumps(VALID)))
    result = planner.plan_with_report(QUESTION)
    assert result.attempts == 2 and result.dag.to_steps() == VALID
    assert "no complete JSON" in result.errors[0]


async def test_async_planning_retries_too() -> None:
    model = ScriptedChatModel(script=[tool_plan(CYCLIC), tool_plan(VALID)])
    planner = LLMPlanner(model)
    report = await planner.aplan_with_report(QUESTION)
    assert report.dag.to_steps() == VALID and report.attempts == 2
    result = await LLMPlanner(ScriptedChatModel(script=["x", "y", "z"])).aplan_with_report(QUESTION)
    assert result.fallback and result.dag.node("final").instruction == QUESTION


def test_empty_question_is_an_error() -> None:
    with pytest.raises(PlanError, match="empty"):
        LLMPlanner(ScriptedChatModel(script=[])).plan("   ")


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        LLMPlanner(ScriptedChatModel(script=[]), max_retries=-1)
    with pytest.raises(ValueError, match="max_steps"):
        LLMPlanner(ScriptedChatModel(script=[]), max_steps=0)


# ---- make_planner and auto -------------------------------------------------------------------------


def test_make_planner_by_name() -> None:
    model = ScriptedChatModel(script=[])
    assert isinstance(make_planner("structural"), StructuralPlanner)
    assert isinstance(make_planner("llm", model), LLMPlanner)
    assert isinstance(make_planner("auto"), AutoPlanner)
    assert make_planner("auto", model).name == "auto"
    with pytest.raises(PlannerConfigError, match="--model"):
        make_planner("llm")
    with pytest.raises(PlannerConfigError, match="items"):
        make_planner("given")
    with pytest.raises(PlannerConfigError, match="unknown planner 'magic'"):
        make_planner("magic")  # type: ignore[arg-type]


def test_auto_reads_mas_questions_structurally_without_calling_the_model() -> None:
    model = ScriptedChatModel(script=[tool_plan(VALID)])
    result = AutoPlanner(model).plan_with_report(MAS_QUESTION)
    assert result.planner == "structural"
    assert result.dag.parents("1") == ["0"] and result.dag.parents("final") == ["0", "1"]
    assert model.call_count == 0


def test_auto_sends_other_questions_to_the_model() -> None:
    model = ScriptedChatModel(script=[tool_plan(VALID)])
    result = AutoPlanner(model).plan_with_report(QUESTION)
    assert result.planner == "llm" and result.dag.to_steps() == VALID and model.call_count == 1


def test_auto_without_a_model_plans_one_step_and_says_how_to_configure() -> None:
    result = AutoPlanner().plan_with_report(QUESTION)
    assert result.fallback and result.planner == "auto"
    assert result.dag.to_steps() == [{"id": "final", "instruction": QUESTION, "depends_on": []}]
    assert result.notes == [NO_MODEL_NOTE]
    assert AutoPlanner().plan(MAS_QUESTION).final_id == "final"


def test_auto_falls_back_when_a_mas_looking_text_cannot_be_read() -> None:
    broken = ("A Answer[1].. The answer is recorded as Answer[0]\n\nB Answer[0].. The answer is recorded as "
              "Answer[1]\n\nPlease calculate Answer[0]*Answer[1].")
    result = AutoPlanner().plan_with_report(broken)
    assert result.fallback and "cannot be read structurally" in result.notes[0] and "cycle" in result.notes[0]


async def test_auto_async() -> None:
    model = ScriptedChatModel(script=[tool_plan(VALID)])
    planner = make_planner("auto", model)
    assert (await planner.aplan(MAS_QUESTION)).ids == ["0", "1", "final"]
    assert (await planner.aplan(QUESTION)).to_steps() == VALID
    assert (await AutoPlanner().aplan_with_report(QUESTION)).fallback
