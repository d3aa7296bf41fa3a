"""The task DAG: validation, repairs, graph queries, and property tests of the validator."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from reso.graphs.dag import PlanError, TaskDAG, TaskNode, repair_plan


def step(id: str, *deps: str, instruction: str | None = None) -> dict:
    return {"id": id, "instruction": instruction or f"do {id}", "depends_on": list(deps)}


# A diamond with a side branch: a -> b, a -> c, (b, c) -> d, e -> d.
DIAMOND = [step("a"), step("b", "a"), step("c", "a"), step("e"), step("d", "b", "c", "e")]


def test_from_steps_keeps_list_order_and_finds_the_final_step() -> None:
    dag = TaskDAG.from_steps(DIAMOND)
    assert dag.ids == ["a", "b", "c", "e", "d"]
    assert dag.final_id == "d"
    assert dag.repair_notes == []
    assert dag.to_steps() == DIAMOND


def test_graph_queries_on_the_diamond() -> None:
    dag = TaskDAG.from_steps(DIAMOND)
    assert dag.parents("d") == ["b", "c", "e"]
    assert dag.children("a") == ["b", "c"]
    assert dag.children("d") == []
    assert dag.ancestors("d") == ["a", "b", "c", "e"]
    assert dag.ancestors("a") == []
    assert dag.descendants("a") == ["b", "c", "d"]
    assert dag.node("c").instruction == "do c"
    assert dag.levels() == [["a", "e"], ["b", "c"], ["d"]]
    assert len(dag) == 5


def test_topological_order_is_stable_by_list_order() -> None:
    # Already topological: unchanged. Shuffled: each step waits for its parents, ties go by list position.
    assert TaskDAG.from_steps(DIAMOND).topological_order() == ["a", "b", "c", "e", "d"]
    shuffled = [step("d", "b", "c", "e"), step("c", "a"), step("e"), step("b", "a"), step("a")]
    assert TaskDAG.from_steps(shuffled).topological_order() == ["e", "a", "c", "b", "d"]


def test_critical_path_is_the_heaviest_chain() -> None:
    dag = TaskDAG.from_steps(DIAMOND)
    durations = {"a": 1.0, "b": 5.0, "c": 2.0, "e": 4.0, "d": 0.5}
    assert dag.critical_path(durations) == pytest.approx(6.5)  # a -> b -> d
    durations["e"] = 9.0
    assert dag.critical_path(durations) == pytest.approx(9.5)


def test_critical_path_needs_every_duration() -> None:
    with pytest.raises(KeyError, match="'e'"):
        TaskDAG.from_steps(DIAMOND).critical_path({"a": 1, "b": 1, "c": 1, "d": 1})


def test_unknown_node_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="'zz'"):
        TaskDAG.from_steps(DIAMOND).node("zz")


def test_single_step_plan() -> None:
    dag = TaskDAG.single_step("What is 2+2?")
    assert dag.to_steps() == [{"id": "final", "instruction": "What is 2+2?", "depends_on": []}]
    assert dag.final_id == "final" and dag.levels() == [["final"]]


def test_ids_and_dependencies_are_normalised_to_strings() -> None:
    dag = TaskDAG.from_steps([{"id": 1, "instruction": " one "}, {"id": 2, "instruction": "two",
                                                                    "depends_on": [1]}])
    assert dag.to_steps() == [step("1", instruction="one"), step("2", "1", instruction="two")]


def test_repairs_are_applied_and_reported() -> None:
    steps = [step("1"), step("2", "1", "1", "2", "9"), step("3")]
    fixed, notes = repair_plan(steps)
    assert fixed == [step("1"), step("2", "1"), step("3", "2")]
    assert notes == [
        "step '2': listed dependency '1' once",
        "step '2': dropped its dependency on itself",
        "step '2': dropped the dependency on unknown step '9'",
        "step '3' is the final step; it now also depends on the otherwise unused step(s) '2'",
    ]
    dag = TaskDAG.from_steps(steps)
    assert dag.repair_notes == notes and dag.final_id == "3"
    assert steps[1]["depends_on"] == ["1", "1", "2", "9"], "the caller's steps are not modified"


def test_several_unused_steps_join_the_last_one() -> None:
    dag = TaskDAG.from_steps([step("x"), step("y"), step("z", "x"), step("w")])
    assert dag.final_id == "w"
    assert dag.parents("w") == ["y", "z"]


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([], "at least one step"),
        ([step("a"), step("a")], "'a' used by more than one step"),
        ([step("a", "b"), step("b", "a"), step("c", "a")],
         "cycle: ('a' needs 'b' needs 'a'|'b' needs 'a' needs 'b')"),
        ([{"id": "a", "instruction": "   "}], "step 'a' has no instruction"),
        ([{"instruction": "x"}], "step 1 has no id"),
        (["just text"], "step 1 is a str"),
        ("a plan", "must be a list of steps"),
        ([{"id": "a", "instruction": "x", "depends_on": {"b": 1}}], "step 'a': depends_on must be a list"),
    ],
)
def test_unrepairable_plans_are_rejected_naming_the_step(steps: list, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        TaskDAG.from_steps(steps)
    with pytest.raises(PlanError, match=message):
        TaskDAG.from_steps(steps, repair=False)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([step("a", "a")], "step 'a' depends on itself"),
        ([step("a", "q")], "step 'a' depends on unknown step\\(s\\) 'q'"),
        ([step("a"), step("b", "a", "a")], "step 'b' lists a dependency twice"),
        ([step("a"), step("b")], "exactly one final step.*'a', 'b'"),
    ],
)
def test_strict_mode_rejects_what_repair_would_fix(steps: list, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        TaskDAG.from_steps(steps, repair=False)
    assert TaskDAG.from_steps(steps).repair_notes


def test_direct_construction_validates_too() -> None:
    with pytest.raises(ValidationError, match="exactly one final step") as caught:
        TaskDAG(nodes=[TaskNode(id="a", instruction="x"), TaskNode(id="b", instruction="y")])
    assert isinstance(caught.value, ValueError)
    with pytest.raises(ValidationError):
        TaskNode(id="", instruction="x")


def test_a_dag_round_trips_through_json() -> None:
    dag = TaskDAG.from_steps(DIAMOND)
    again = TaskDAG.model_validate_json(dag.model_dump_json())
    assert again.to_steps() == dag.to_steps()
    assert again.topological_order() == dag.topological_order()


# ---- property tests --------------------------------------------------------------------------------


@st.composite
def random_dags(draw: st.DrawFn, max_nodes: int = 12) -> list[dict]:
    """A random single-sink DAG as steps in a topological order (ids are arbitrary distinct strings)."""
    n = draw(st.integers(min_value=1, max_value=max_nodes))
    ids = draw(st.lists(st.text("abcxyz0123456789_", min_size=1, max_size=4), min_size=n, max_size=n,
                        unique=True))
    steps = []
    for i, node_id in enumerate(ids):
        deps = draw(st.lists(st.sampled_from(ids[:i]), unique=True)) if i else []
        steps.append(step(node_id, *deps))
    used = {dep for s in steps for dep in s["depends_on"]}
    unused = [s["id"] for s in steps[:-1] if s["id"] not in used]
    steps[-1]["depends_on"] += unused  # exactly one sink: the last step
    return steps


def _is_topological(order: list[str], steps: list[dict]) -> bool:
    position = {node_id: i for i, node_id in enumerate(order)}
    return all(position[dep] < position[s["id"]] for s in steps for dep in s["depends_on"])


@given(random_dags(), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_shuffled_steps_round_trip(steps: list[dict], rng: random.Random) -> None:
    shuffled = list(steps)
    rng.shuffle(shuffled)
    dag = TaskDAG.from_steps(shuffled)
    assert dag.repair_notes == []
    assert dag.to_steps() == shuffled
    assert dag.final_id == steps[-1]["id"]
    assert sorted(dag.topological_order()) == sorted(s["id"] for s in steps)
    assert _is_topological(dag.topological_order(), steps)
    assert TaskDAG.from_steps(dag.to_steps(), repair=False).to_steps() == shuffled
    waves = dag.levels()
    assert sorted(i for wave in waves for i in wave) == sorted(dag.ids)
    wave_of = {i: w for w, wave in enumerate(waves) for i in wave}
    for s in steps:
        assert all(wave_of[dep] < wave_of[s["id"]] for dep in s["depends_on"])
    assert dag.critical_path({i: 1.0 for i in dag.ids}) == pytest.approx(len(waves))


@given(random_dags())
@settings(max_examples=100, deadline=None)
def test_already_topological_lists_keep_their_order(steps: list[dict]) -> None:
    assert TaskDAG.from_steps(steps).topological_order() == [s["id"] for s in steps]


def _has_cycle(edges: dict[str, list[str]]) -> bool:
    """Oracle: peel off steps whose dependencies are all peeled; a cycle is what never peels."""
    remaining = {node: set(deps) for node, deps in edges.items()}
    while True:
        free = [node for node, deps in remaining.items() if not deps]
        if not free:
            return bool(remaining)
        for node in free:
            del remaining[node]
        for deps in remaining.values():
            deps.difference_update(free)


@given(st.integers(min_value=1, max_value=8).flatmap(
    lambda n: st.lists(st.lists(st.integers(0, n - 1), max_size=4), min_size=n, max_size=n)))
@settings(max_examples=300, deadline=None)
def test_the_validator_never_accepts_a_cycle(raw: list[list[int]]) -> None:
    edges = {str(i): sorted({str(d) for d in deps if d != i}) for i, deps in enumerate(raw)}
    steps = [step(node, *deps) for node, deps in edges.items()]
    if _has_cycle(edges):
        with pytest.raises(PlanError, match="cycle"):
            TaskDAG.from_steps(steps)
        with pytest.raises(PlanError, match="cycle"):
            TaskDAG.from_steps(steps, repair=False)
    else:
        dag = TaskDAG.from_steps(steps)  # acyclic plans are always accepted (extra sinks get joined)
        assert _is_topological(dag.topological_order(), dag.to_steps())
        assert len([i for i in dag.ids if not dag.children(i)]) == 1


@given(random_dags(max_nodes=8), st.data())
@settings(max_examples=150, deadline=None)
def test_a_back_edge_is_always_rejected(steps: list[dict], data: st.DataObject) -> None:
    if len(steps) < 2:
        return
    ancestor_index = data.draw(st.integers(0, len(steps) - 2))
    ancestor = steps[ancestor_index]["id"]
    dag = TaskDAG.from_steps(steps)
    below = dag.descendants(ancestor)
    assert below, "every step but the last feeds the final step"
    target = data.draw(st.sampled_from(below))
    cyclic = [dict(s, depends_on=[*s["depends_on"], target]) if s["id"] == ancestor else s for s in steps]
    with pytest.raises(PlanError, match="cycle"):
        TaskDAG.from_steps(cyclic)
