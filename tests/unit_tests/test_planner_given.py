"""The given planner: a release item's ground-truth plan as a task DAG that agrees with the item's DAG."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest

from reso.graphs.dag import PlanError
from reso.graphs.planners import FINAL_ID, GivenPlanner, make_planner, plan_from_item
from tests.resources import unavailable

# A trimmed release item in the release's own shape (fields the planner reads).
ITEM = {
    "dag": {"0": [], "1": [0, 2], "2": []},
    "node_info": {
        "0": {"in_edges": [1], "out_edges": []},
        "1": {"in_edges": [], "out_edges": [0, 2]},
        "2": {"in_edges": [1], "out_edges": []},
    },
    "problem_text": (
        "The following is a complex question composed of multiple sub-questions:\n\n"
        "A sum is UNK_0(a constant calculated by adding the sum of Answer[1] to the number (-218.00). ). "
        "What is it?. The answer is recorded as Answer[0]\n\n"
        "Divide $942.0!$ by $15^n$.. The answer is recorded as Answer[1]\n\n"
        "Let a = UNK_2(a constant calculated by adding the sum of Answer[1] to the number (-137.00). ),\n"
        "find n.. The answer is recorded as Answer[2]\n\n"
        "Please use the answers to the above questions to perform the following calculations:\n"
        "Please calculate the value of Answer[0]*Answer[1]*Answer[2]."
    ),
    "gt_plan": repr([
        "Divide $942.0!$ by $15^n$.. The answer is recorded as Answer[1]\n",
        ("A sum is UNK_0(a constant calculated by adding the sum of Answer[1] to the number (-218.00). ). "
         "What is it?. The answer is recorded as Answer[0]\n"),
        ("Let a = UNK_2(a constant calculated by adding the sum of Answer[1] to the number (-137.00). ),\n"
         "find n.. The answer is recorded as Answer[2]\n"),
        "Please calculate the value of Answer[0]*Answer[1]*Answer[2].",
    ]),
}


def test_plan_from_item_follows_gt_plan_order() -> None:
    dag = plan_from_item(ITEM)
    assert dag.ids == ["1", "0", "2", FINAL_ID]
    assert dag.topological_order() == dag.ids
    assert dag.parents("0") == ["1"] and dag.parents("2") == ["1"] and dag.parents("1") == []
    assert dag.parents(FINAL_ID) == ["0", "1", "2"]
    assert dag.node("2").instruction == (
        "Let a = UNK_2(a constant calculated by adding the sum of Answer[1] to the number (-137.00). ),\n"
        "find n.. The answer is recorded as Answer[2]"
    )
    assert dag.node(FINAL_ID).instruction == "Please calculate the value of Answer[0]*Answer[1]*Answer[2]."


def test_gt_plan_may_already_be_a_list() -> None:
    item = dict(ITEM, gt_plan=ast.literal_eval(ITEM["gt_plan"]))
    assert plan_from_item(item).to_steps() == plan_from_item(ITEM).to_steps()


def test_a_plan_that_disagrees_with_the_item_dag_names_the_node() -> None:
    item = copy.deepcopy(ITEM)
    item["node_info"]["2"]["in_edges"] = [0]
    with pytest.raises(PlanError, match="step '2'.*in_edges say \\['0'\\]"):
        plan_from_item(item)
    assert plan_from_item(item, check=False).parents("2") == ["1"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gt_plan": None}, "no 'gt_plan'"),
        ({"gt_plan": "[unclosed"}, "not a Python list literal"),
        ({"gt_plan": "{'a': 1}"}, "must be a list of step texts"),
        ({"node_info": None}, "no 'node_info'"),
        ({"node_info": {"0": {"in_edges": [1]}, "1": {"in_edges": []}}}, "node_info has \\['0', '1'\\]"),
    ],
)
def test_bad_items_raise_plan_errors(change: dict, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        plan_from_item({**ITEM, **change})


def test_given_planner_looks_questions_up_by_text() -> None:
    planner = GivenPlanner([ITEM])
    spaced = "  " + ITEM["problem_text"].replace("\n\n", "\n \n") + "\n"
    assert planner.plan(spaced).to_steps() == plan_from_item(ITEM).to_steps()
    with pytest.raises(PlanError, match="no dataset item has this question"):
        planner.plan("What is 2 + 2?")
    assert make_planner("given", items=[ITEM]).plan(ITEM["problem_text"]).final_id == FINAL_ID


async def test_given_planner_async() -> None:
    result = await GivenPlanner([ITEM]).aplan_with_report(ITEM["problem_text"])
    assert result.planner == "given" and result.dag.ids[0] == "1"


def test_given_planner_from_file(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps([ITEM]), encoding="utf-8")
    assert len(GivenPlanner.from_file(path)) == 1
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(PlanError, match="expected a JSON list"):
        GivenPlanner.from_file(path)
    with pytest.raises(PlanError, match="missing.json"):
        GivenPlanner.from_file(tmp_path / "missing.json")


RELEASE_FILES = ["MATH-MAS-Easy.json", "MATH-MAS-Medium.json", "MATH-MAS-Hard.json",
                 "Scibench-MAS-Easy.json", "Scibench-MAS-Medium.json"]


@pytest.mark.parametrize("name", RELEASE_FILES)
def test_every_released_item_agrees_with_its_dag(shared_data: Path, name: str) -> None:
    path = shared_data / "reso-mas" / name
    if not path.is_file():
        unavailable(f"{path} not found")
    items = json.loads(path.read_text(encoding="utf-8"))
    planner = GivenPlanner(items)
    for index, item in enumerate(items):
        where = f"{name} item {index}"
        dag = plan_from_item(item)
        gt_plan = ast.literal_eval(item["gt_plan"])
        assert len(dag) == len(gt_plan) == len(item["gt_subtask"]), where
        assert dag.topological_order() == dag.ids, where
        for node, info in item["node_info"].items():
            assert sorted(dag.parents(node)) == sorted(str(p) for p in info["in_edges"]), where
            assert sorted(c for c in dag.children(node) if c != FINAL_ID) == \
                sorted(str(c) for c in item["dag"][node]), where
        assert sorted(dag.parents(FINAL_ID)) == sorted(item["node_info"]), where
        assert [n.instruction for n in dag.nodes] == [text.strip() for text in gt_plan], where
        if "topological_order" in item:
            assert dag.ids[:-1] == [str(i) for i in item["topological_order"]], where
        assert planner.plan(item["problem_text"]).to_steps() == dag.to_steps(), where
