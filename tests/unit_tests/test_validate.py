"""The release-format validator: accepts every released and synthesised item, rejects corrupted ones."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from reso.evals.datasets.release_format import parse_plan
from reso.evals.validate import validate_file, validate_item

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
RELEASED = ["MATH-MAS-Easy.json", "MATH-MAS-Medium.json", "MATH-MAS-Hard.json",
            "Scibench-MAS-Easy.json", "Scibench-MAS-Medium.json"]


@pytest.fixture()
def items() -> list[dict]:
    return json.loads((FIXTURES / "reso_mas_sample.json").read_text(encoding="utf-8"))


def _reasons(item: dict) -> str:
    return " | ".join(validate_item(item))


def test_sample_items_are_valid(items: list[dict]) -> None:
    assert [validate_item(item) for item in items] == [[], [], []]


def test_every_released_item_is_valid(shared_data: Path) -> None:
    for name in RELEASED:
        reports = validate_file(shared_data / "reso-mas" / name)
        assert [r.where for r in reports if not r.valid] == [], name
        assert len(reports) == {"MATH-MAS-Easy.json": 90, "MATH-MAS-Medium.json": 89, "MATH-MAS-Hard.json": 89,
                                "Scibench-MAS-Easy.json": 107, "Scibench-MAS-Medium.json": 80}[name]


def test_wrong_linked_constant(items: list[dict]) -> None:
    item = copy.deepcopy(items[0])
    node = item["node_info"]["0"]
    node["problem_UNK"] = node["problem_UNK"].replace("(-218.00)", "(-217.00)")
    assert "node 0: linked constant -217.00 + sum(Answer[1]) = 16, not the original value 15" in _reasons(item)


def test_rounding_of_adj_is_tolerated_but_not_more(items: list[dict]) -> None:
    item = copy.deepcopy(items[0])
    item["node_info"]["0"]["question_vals"] = [15.004]
    assert validate_item(item) == []
    item["node_info"]["0"]["question_vals"] = [15.02]
    assert "node 0: linked constant" in _reasons(item)


def test_linked_constant_naming_the_wrong_parents(items: list[dict]) -> None:
    item = copy.deepcopy(items[1])
    node = item["node_info"]["1"]
    node["problem_UNK"] = node["problem_UNK"].replace("Answer[0, 3]", "Answer[0, 2]")
    assert "node 1: linked constant sums Answer[0, 2] but the node's parents are [0, 3]" in _reasons(item)


def test_wrong_final_answer(items: list[dict]) -> None:
    item = copy.deepcopy(items[2])
    item["answer_number"] = "11.9"
    assert "answer_number 11.9 is not the product of the sub-answers 11.6305" in _reasons(item)
    item["answer_number"] = "11.7"  # within 1 % of the product and of gt_subtask's final
    assert validate_item(item) == []


def test_wrong_sub_answer_breaks_the_product_and_gt_subtask(items: list[dict]) -> None:
    item = copy.deepcopy(items[0])
    item["node_info"]["2"]["answer_val"] = 65.0
    reasons = _reasons(item)
    assert "gt_subtask[2] = 64 but node 2's answer_val is 65" in reasons
    assert "not the product of the sub-answers" in reasons


def test_edges_that_disagree(items: list[dict]) -> None:
    item = copy.deepcopy(items[0])
    item["node_info"]["1"]["out_edges"] = [0]
    assert "node 1: out_edges [0] disagree with dag[1] [0, 2]" in _reasons(item)
    item = copy.deepcopy(items[0])
    item["node_info"]["2"]["in_edges"] = []
    assert "node 2: in_edges [] disagree with the dag's parents [1]" in _reasons(item)


def test_a_cycle_is_rejected(items: list[dict]) -> None:
    item = copy.deepcopy(items[2])  # 1 -> 0 -> 2; add 2 -> 1
    item["dag"]["2"] = [1]
    item["node_info"]["2"]["out_edges"] = [1]
    item["node_info"]["1"]["in_edges"] = [2]
    assert "dag: cycle through nodes" in _reasons(item)


def test_plan_out_of_topological_order(items: list[dict]) -> None:
    item = copy.deepcopy(items[0])
    steps = parse_plan(item["gt_plan"])
    steps[0], steps[1] = steps[1], steps[0]
    item["gt_plan"] = repr(steps)
    reasons = _reasons(item)
    assert "gt_plan: node 0 comes before its parent 1 (not topological)" in reasons
    assert "gt_subtask[0] = 233 but node 0's answer_val is 20" in reasons


def test_plan_and_topological_order_mismatch(items: list[dict]) -> None:
    item = copy.deepcopy(items[2])
    item["topological_order"] = [0, 1, 2]
    assert "topological_order [0, 1, 2] differs from gt_plan's order [1, 0, 2]" in _reasons(item)
    item = copy.deepcopy(items[2])
    steps = parse_plan(item["gt_plan"])
    item["gt_plan"] = repr(steps[:-1] + [steps[-1].replace("*Answer[2]", "")])
    assert "the final step does not combine Answer[0..n-1]" in _reasons(item)


def test_structural_problems(items: list[dict]) -> None:
    assert validate_item([]) == ["expected an object, got list"]
    item = copy.deepcopy(items[0])
    del item["gt_subtask"]
    assert validate_item(item) == ["missing field 'gt_subtask'"]
    item = copy.deepcopy(items[0])
    item["gt_plan"] = "['only one step']"
    assert "gt_plan: 1 steps for 3 nodes (expected 4)" in _reasons(item)
    item = copy.deepcopy(items[0])
    item["dag"]["0"] = [7]
    assert "dag[0]: expected a list of node ids" in _reasons(item)
    item = copy.deepcopy(items[0])
    item["problem_text"] = item["problem_text"].replace("The sum of two numbers", "The sum of 2 numbers")
    assert "problem_text: node 0's text missing or out of order" in _reasons(item)


def test_unlinked_items_skip_the_link_check_but_not_the_rest(items: list[dict]) -> None:
    item = copy.deepcopy(items[0])
    item["linked"] = False
    assert "node 0: linked constant in an item marked \"linked\": false" in _reasons(item)


def test_validate_file_reports_per_item(tmp_path: Path, items: list[dict]) -> None:
    broken = copy.deepcopy(items[0])
    broken["answer_number"] = "1"
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(item) for item in [items[1], broken]) + "\n", encoding="utf-8")
    reports = validate_file(path)
    assert [r.valid for r in reports] == [True, False]
    assert reports[1].where == f"{path}:2"
