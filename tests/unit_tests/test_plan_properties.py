"""Property tests for plans from untrusted sources (complementing test_dag.py and test_planner_structural.py,
which generate valid DAGs and MAS questions): arbitrary JSON-shaped steps, arbitrary question text and arbitrary
model replies. Whatever comes in, the validator and the planners either give a valid DAG or raise `PlanError`
(the LLM planner never raises: it falls back to one step)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reso.graphs.dag import PlanError, TaskDAG
from reso.graphs.planners import LLMPlanner, StructuralPlanner
from tests.fakes import ScriptedChatModel

FAST = settings(max_examples=200, deadline=None)

ids = st.one_of(st.sampled_from(["1", "2", "3", "final", "a"]), st.integers(0, 3), st.none(), st.booleans(),
                st.floats(allow_nan=True), st.text(max_size=3))
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
steps_like = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"id": ids},
            optional={"instruction": st.one_of(st.text(max_size=30), json_scalars),
                      "depends_on": st.one_of(st.lists(ids, max_size=4), json_scalars)},
        ),
        json_scalars,
        st.lists(json_scalars, max_size=3),
    ),
    max_size=6,
)


def assert_valid(dag: TaskDAG) -> None:
    steps = dag.to_steps()
    known = {step["id"] for step in steps}
    assert len(known) == len(steps) >= 1
    assert all(dep in known and dep != step["id"] for step in steps for dep in step["depends_on"])
    assert [node for node in dag.ids if not dag.children(node)] == [dag.final_id]
    order = dag.topological_order()
    position = {node: i for i, node in enumerate(order)}
    assert all(position[dep] < position[step["id"]] for step in steps for dep in step["depends_on"])
    assert TaskDAG.from_steps(steps, repair=False).to_steps() == steps  # repaired output needs no repair


@FAST
@given(st.one_of(steps_like, json_scalars, st.dictionaries(st.text(max_size=5), json_scalars, max_size=3)))
def test_the_validator_gives_a_valid_dag_or_a_plan_error(raw: Any) -> None:
    for repair in (True, False):
        try:
            dag = TaskDAG.from_steps(raw, repair=repair)
        except PlanError as error:
            assert str(error).strip()
        else:
            assert_valid(dag)


@FAST
@given(st.text(max_size=400))
def test_the_structural_planner_gives_a_valid_dag_or_a_plan_error(text: str) -> None:
    try:
        dag = StructuralPlanner().plan(text)
    except PlanError as error:
        assert str(error).strip()
    else:
        assert_valid(dag)


@FAST
@given(st.lists(st.one_of(st.text(max_size=200), st.sampled_from([
    '{"steps": []}', '{"steps": [{"id": "a"}]}', '{"steps": [{"id": "a", "instruction": "x", "depends_on": ["a"]}]}',
    '{"steps": [{"id": "a", "instruction": "x", "depends_on": ["b"]}, '
    '{"id": "b", "instruction": "y", "depends_on": ["a"]}]}', "```json\n{\"steps\": [", "null", "[]"])),
    min_size=3, max_size=3))
def test_the_llm_planner_always_returns_a_valid_dag(replies: list[str]) -> None:
    question = "What is 2 + 3, then times 4?"
    result = LLMPlanner(ScriptedChatModel(script=list(replies))).plan_with_report(question)
    assert_valid(result.dag)
    if result.fallback:
        assert result.dag.to_steps() == [{"id": "final", "instruction": question, "depends_on": []}]
