"""Released MATH-MAS / SciBench-MAS items, planned from their text by the structural planner and solved by
an oracle-scripted pool (each sub-question answered with its ground truth, the product by the exact tool),
give the item's `answer_number`."""

from __future__ import annotations

import json
import re

import pytest

from reso.graphs.api import ReSo
from reso.reward.answers import answers_match
from tests.engine_fakes import ScriptedAnswerer, scripted_team

FILES = ["MATH-MAS-Easy.json", "MATH-MAS-Medium.json", "MATH-MAS-Hard.json",
         "Scibench-MAS-Easy.json", "Scibench-MAS-Medium.json"]


def _oracle_answers(item: dict) -> dict[str, str]:
    """'recorded as Answer[i]' → the boxed ground-truth answer of node i."""
    return {f"recorded as Answer[{node}]": f"The answer is \\boxed{{{info['answer_val']}}}"
            for node, info in item["node_info"].items()}


def _choose(subtask: str) -> list[str]:
    return ["oracle"] if re.search(r"recorded as Answer\[\d+\]", subtask) else ["calc"]


@pytest.mark.parametrize("name", FILES)
def test_released_items_are_solved_exactly_with_an_oracle_pool(shared_data, name):
    items = json.loads((shared_data / "reso-mas" / name).read_text(encoding="utf-8"))[:3]
    for item in items:
        oracle = ScriptedAnswerer(answers=_oracle_answers(item), calls=[])
        team = scripted_team({"oracle": oracle}, _choose)
        result = ReSo({"plan.planner": "structural"}, team=team).solve(item["problem_text"])
        assert result.status == "done", (name, result.notes, [s.notes for s in result.steps])
        assert len(result.steps) == len(item["node_info"]) + 1
        assert result.steps[-1].agent == "calc"
        assert answers_match(result.answer, str(item["answer_number"]), rel_tol=1e-6), (
            name, result.answer, item["answer_number"])
