"""The given planner: a ReSo release item's own ground-truth plan (its `gt_plan` field) as a task DAG."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from reso.graphs.dag import FINAL_ID, PlanError, TaskDAG
from reso.graphs.plan_settings import PlannerName
from reso.graphs.planners.base import ModelFreePlanner, PlanResult
from reso.graphs.planners.mas_format import parse_mas_steps


def plan_from_item(item: Mapping[str, Any], *, check: bool = True) -> TaskDAG:
    """The ground-truth plan of one MATH-MAS / SciBench-MAS item.

    `gt_plan` lists the sub-questions in topological order and the final step last; the step recording
    `Answer[i]` becomes node "i" and the final step node "final", with the dependencies its
    `Answer[...]` references name.

    Args:
        item: A release item with `gt_plan` (a Python-list literal string, or a list) and, for `check`,
            `node_info` (per node: `in_edges`).
        check: Also require that every node's parents equal the item's `node_info[i].in_edges` and that the
            final step uses every sub-answer.

    Raises:
        PlanError: `gt_plan` is missing or unreadable, or the plan disagrees with the item's DAG.
    """
    raw = item.get("gt_plan")
    if raw is None:
        raise PlanError("the item has no 'gt_plan' field")
    try:
        steps = ast.literal_eval(raw) if isinstance(raw, str) else raw
    except (ValueError, SyntaxError) as error:
        raise PlanError(f"gt_plan is not a Python list literal: {error}") from None
    if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
        raise PlanError("gt_plan must be a list of step texts")
    # The plan's steps are exactly the blocks of a MAS-format text, so the text reader applies unchanged.
    dag = TaskDAG.from_steps(parse_mas_steps("\n\n".join(steps)), repair=False)
    if check:
        _check_against_item(dag, item)
    return dag


def _check_against_item(dag: TaskDAG, item: Mapping[str, Any]) -> None:
    node_info = item.get("node_info")
    if not isinstance(node_info, Mapping):
        raise PlanError("the item has no 'node_info' to check the plan against")
    expected_ids = {str(key) for key in node_info}
    planned_ids = set(dag.ids) - {FINAL_ID}
    if planned_ids != expected_ids:
        raise PlanError(f"gt_plan has steps {sorted(planned_ids)} but node_info has {sorted(expected_ids)}")
    for node_id, info in node_info.items():
        expected = {str(parent) for parent in info.get("in_edges", [])}
        if set(dag.parents(str(node_id))) != expected:
            raise PlanError(
                f"step {str(node_id)!r}: gt_plan depends on {sorted(dag.parents(str(node_id)))}, "
                f"node_info in_edges say {sorted(expected)}"
            )
    if set(dag.parents(FINAL_ID)) != expected_ids:
        raise PlanError(f"the final step uses {sorted(dag.parents(FINAL_ID))}, not every sub-answer")


def _question_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class GivenPlanner(ModelFreePlanner):
    """Looks a question up among dataset items and returns that item's ground-truth plan.

    A question matches an item when it equals the item's `problem_text` or `problem_text_sort` up to
    whitespace.
    """

    name = PlannerName.GIVEN.value

    def __init__(self, items: Iterable[Mapping[str, Any]]) -> None:
        self._items: dict[str, Mapping[str, Any]] = {}
        for item in items:
            for field in ("problem_text", "problem_text_sort"):
                text = item.get(field)
                if isinstance(text, str):
                    self._items[_question_key(text)] = item

    @classmethod
    def from_file(cls, path: str | Path) -> GivenPlanner:
        """A planner over the items of a release JSON file (a list of items).

        Raises:
            PlanError: The file cannot be read or is not a JSON list.
        """
        try:
            items = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise PlanError(f"{path}: cannot read dataset items: {error}") from None
        if not isinstance(items, list):
            raise PlanError(f"{path}: expected a JSON list of items")
        return cls(items)

    def __len__(self) -> int:
        return len(self._items)

    def plan_with_report(self, question: str) -> PlanResult:
        """The plan of the item whose question this is.

        Raises:
            PlanError: No item has this question, or its plan is invalid.
        """
        item = self._items.get(_question_key(question))
        if item is None:
            raise PlanError("no dataset item has this question, so there is no ground-truth plan for it")
        return PlanResult(dag=plan_from_item(item), planner=self.name)
