"""Turning dataset records into `Problem`s: the ReSo release format (MATH-MAS, SciBench-MAS and this
project's synthesised files) and plain `{id, question, answer[, plan]}` records (the GSM8K replay file is
one of these, with extra fields that are ignored)."""

from __future__ import annotations

from pathlib import Path

from reso.evals.datasets.numeric import format_number, parse_number
from reso.evals.datasets.problem import DEFAULT_REL_TOL, DatasetError, Problem
from reso.evals.datasets.raw_records import Record, read_records
from reso.evals.datasets.release_format import (
    answer_refs,
    parse_plan,
    split_recorded,
)
from reso.graphs.dag import FINAL_ID

LEVELS = {3: "easy", 5: "medium", 7: "hard"}


def load_file(path: str | Path, *, id_prefix: str | None = None, source: str | None = None) -> list[Problem]:
    """Every problem of a dataset file; each record may be a release item or a plain record.

    Args:
        path: A `.json` list or a JSON Lines file.
        id_prefix: Prefix for ids of records without an `id` (default: the file's stem).
        source: The `meta["source"]` of every problem (default: the file's stem).

    Raises:
        DatasetError: For a malformed file or record, naming file, line or item index, and field.
    """
    path = Path(path)
    prefix = id_prefix or path.stem
    problems = [
        problem_from_record(record, id_prefix=prefix, source=source or path.stem)
        for record in read_records(path)
    ]
    seen: dict[str, int] = {}
    for index, problem in enumerate(problems):
        if problem.id in seen:
            raise DatasetError(f"{path}: item {index}: field 'id': duplicate id {problem.id!r} "
                               f"(first at item {seen[problem.id]})")
        seen[problem.id] = index
    return problems


def problem_from_record(record: Record, *, id_prefix: str, source: str) -> Problem:
    """One record as a Problem: a release item when it has `node_info`, else a plain record."""
    if not isinstance(record.data, dict):
        raise DatasetError(f"{record.where}: expected a JSON object, got {type(record.data).__name__}")
    if "node_info" in record.data:
        return release_problem(record, id_prefix=id_prefix, source=source)
    return plain_problem(record, source=source)


def plain_problem(record: Record, *, source: str) -> Problem:
    """A `{id, question, answer[, plan, subtask_answers, meta]}` record."""
    data: dict = record.data  # type: ignore[assignment]
    for field in ("id", "question", "answer"):
        if field not in data:
            raise record.error(field, "missing")
    problem_id = _text_or_number(record, data, "id")
    question = data["question"]
    if not isinstance(question, str) or not question.strip():
        raise record.error("question", f"expected a non-empty string, got {_kind(question)}")
    answer = _text_or_number(record, data, "answer")
    plan = _plain_plan(record, data["plan"]) if data.get("plan") is not None else None
    subtask_answers = None
    if data.get("subtask_answers") is not None:
        raw = data["subtask_answers"]
        if not isinstance(raw, dict):
            raise record.error("subtask_answers", f"expected an object, got {_kind(raw)}")
        subtask_answers = {str(key): _text_or_number(record, raw, key, f"subtask_answers.{key}")
                           for key in raw}
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise record.error("meta", f"expected an object, got {_kind(meta)}")
    return Problem(problem_id, question, answer, plan, subtask_answers, {"source": source, **meta},
                   _rel_tol(record, data))


def release_problem(record: Record, *, id_prefix: str, source: str) -> Problem:
    """A release item: question = `problem_text`, plan from `gt_plan` (ids from each step's
    "recorded as Answer[i]", dependencies from its `Answer[j]` references and the node's `in_edges`),
    per-step answers from `gt_subtask`, final answer `answer_number`."""
    data: dict = record.data  # type: ignore[assignment]
    for field in ("node_info", "problem_text", "gt_plan", "gt_subtask", "answer_number"):
        if field not in data:
            raise record.error(field, "missing")
    nodes = data["node_info"]
    if not isinstance(nodes, dict) or not nodes:
        raise record.error("node_info", f"expected a non-empty object, got {_kind(nodes)}")
    if not isinstance(data["problem_text"], str):
        raise record.error("problem_text", f"expected a string, got {_kind(data['problem_text'])}")
    try:
        steps = parse_plan(data["gt_plan"])
    except (ValueError, SyntaxError) as error:
        raise record.error("gt_plan", f"not a Python list of strings ({error})") from None
    answers = data["gt_subtask"]
    if not isinstance(answers, list):
        raise record.error("gt_subtask", f"expected a list, got {_kind(answers)}")
    if len(steps) != len(nodes) + 1 or len(answers) != len(steps):
        raise record.error("gt_plan", f"{len(steps)} steps and {len(answers)} gt_subtask answers for "
                                      f"{len(nodes)} sub-questions (expected {len(nodes) + 1} of each)")
    answer = _text_or_number(record, data, "answer_number")

    plan: list[dict] = []
    subtask_answers: dict[str, str] = {}
    for position, (text, value) in enumerate(zip(steps, answers, strict=True)):
        field = f"gt_plan[{position}]"
        step_id: str | None
        if position == len(steps) - 1:
            step_id, instruction = FINAL_ID, text.strip()
            depends_on = answer_refs(text)
        else:
            instruction, step_id = split_recorded(text)
            if step_id is None or step_id not in nodes:
                raise record.error(field, "does not end with 'The answer is recorded as Answer[i]' "
                                          "naming a node of node_info")
            info = nodes[step_id]
            edges = info.get("in_edges", []) if isinstance(info, dict) else []
            refs = [ref for ref in answer_refs(instruction) if ref != step_id]
            depends_on = sorted(set(refs) | {str(edge) for edge in edges}, key=_node_order)
        try:
            subtask_answers[step_id] = value if isinstance(value, str) else format_number(parse_number(value))
        except ValueError as error:
            raise record.error(f"gt_subtask[{position}]", str(error)) from None
        plan.append({"id": step_id, "instruction": instruction, "depends_on": depends_on})
    subtask_answers[FINAL_ID] = answer
    _check_plan(record, plan, "gt_plan")

    problem_id = _text_or_number(record, data, "id") if "id" in data else f"{id_prefix}-{record.index}"
    return Problem(problem_id, data["problem_text"], answer, plan, subtask_answers,
                   _release_meta(data, nodes, source), _rel_tol(record, data))


def _rel_tol(record: Record, data: dict) -> float:
    """The record's grading tolerance (`rel_tol`, relative to the reference), 1 % when it has none."""
    value = data.get("rel_tol")
    if value is None:
        return DEFAULT_REL_TOL
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value < 1.0:
        raise record.error("rel_tol", f"expected a number in [0, 1), got {value!r}")
    return float(value)


def _release_meta(data: dict, nodes: dict, source: str) -> dict:
    infos = {key: info for key, info in nodes.items() if isinstance(info, dict)}
    meta: dict = {
        "source": source,
        "level": LEVELS.get(len(nodes), f"{len(nodes)}-step"),
        "complexity": len(nodes),
        "unit": data.get("unit", "") or "",
        "linked": data.get("linked", True) is not False,
        "step_question_ids": {key: str(info.get("question_id", "")).strip() for key, info in infos.items()},
        "step_domains": {key: str(info.get("source", "")).strip() for key, info in infos.items()},
    }
    units = {key: info["unit"].strip() for key, info in infos.items() if isinstance(info.get("unit"), str)}
    if units:
        meta["step_units"] = units
    if isinstance(data.get("synth"), dict):
        meta["synth"] = data["synth"]
    return meta


def _plain_plan(record: Record, raw: object) -> list[dict]:
    if not isinstance(raw, list) or not raw:
        raise record.error("plan", f"expected a non-empty list of steps, got {_kind(raw)}")
    plan = []
    for index, step in enumerate(raw):
        field = f"plan[{index}]"
        if not isinstance(step, dict):
            raise record.error(field, f"expected an object, got {_kind(step)}")
        for key in ("id", "instruction"):
            if key not in step:
                raise record.error(f"{field}.{key}", "missing")
        step_id = _text_or_number(record, step, "id", f"{field}.id")
        if not isinstance(step["instruction"], str):
            raise record.error(f"{field}.instruction", f"expected a string, got {_kind(step['instruction'])}")
        depends = step.get("depends_on", [])
        if not isinstance(depends, list) or not all(isinstance(d, (str, int)) for d in depends):
            raise record.error(f"{field}.depends_on", "expected a list of step ids")
        plan.append({"id": step_id, "instruction": step["instruction"], "depends_on": [str(d) for d in depends]})
    _check_plan(record, plan, "plan")
    return plan


def _check_plan(record: Record, plan: list[dict], field: str) -> None:
    """Refuse a plan the engine could not run (a cycle, a repeated id), before any item of the file runs;
    defects the engine repairs (an unknown dependency, an unused step) are left to it and its notes."""
    from reso.graphs.dag import PlanError, TaskDAG

    try:
        TaskDAG.from_steps(plan)
    except PlanError as error:
        raise record.error(field, str(error)) from None


def _text_or_number(record: Record, data: dict, key: str, field: str | None = None) -> str:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise record.error(field or key, f"expected a string or number, got {_kind(value)}")
    text = value if isinstance(value, str) else format_number(value)
    if not text.strip():
        raise record.error(field or key, "empty")
    return text.strip()


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _node_order(node: str) -> tuple[int, str]:
    return (int(node), node) if node.isdigit() else (1 << 30, node)
