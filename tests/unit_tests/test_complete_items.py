"""Complete items and the gain split by cause, on hand-made run folders of linked composites replayed from a
small replay file: completeness is read from the recordings of the original sub-questions (a sub-question
never reached after a wrong parent answer counts too), and a composite lost to a missing recording is told
apart from one lost to a wrong answer (a missing recording behind a wrong parent is the wrong answer's)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from reso.evals.datasets import load_dataset
from reso.evals.jobs.comparison import comparison_rows
from reso.evals.reports.benchmark_table import benchmark_rows
from reso.evals.reports.clusters import CLUSTER_METHOD
from reso.evals.reports.compare import load_run
from reso.evals.reports.gain_causes import gain_by_cause
from reso.evals.reports.recordings import (
    complete_items,
    missed_recording,
    original_questions,
    unrecorded_items,
)
from tests.run_fixtures import write_run

# Source question qX: "a box holds 10+X pens", answer X+1. Composite: step 0 asks its first source; step 1 asks
# its second with the constant linked to Answer[0]; the final step multiplies them.
COMPOSITES = {"c0": ("q0", "q1"), "c1": ("q2", "q3"), "c2": ("q3", "q4"), "c3": ("q1", "q2"), "c4": ("q0", "q4")}
UNRECORDED = {"A": {"q3"}, "B": {"q4"}}  # the questions each model has no recording of


def _text(source: str, constant: str) -> str:
    return f"Question {source}: a box holds {constant} pens. How many pens are in two boxes minus the box?"


def _answer(source: str) -> int:
    return int(source[1:]) + 1


def write_replay(path: Path) -> Path:
    lines = []
    for number in range(5):
        source = f"q{number}"
        lines.append({"id": source, "question": _text(source, str(10 + number)), "answer": str(_answer(source)),
                      "responses": {model: f"The answer is {_answer(source)}" for model in UNRECORDED
                                    if source not in UNRECORDED[model]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_dataset(path: Path) -> Path:
    items = []
    for item, (root, child) in COMPOSITES.items():
        adj = 10 + int(child[1:]) - _answer(root)
        linked = f"UNK_1(a constant calculated by adding the sum of Answer[0] to the number ({adj:.2f}). )"
        plan = [{"id": "0", "instruction": _text(root, str(10 + int(root[1:]))), "depends_on": []},
                {"id": "1", "instruction": _text(child, linked), "depends_on": ["0"]},
                {"id": "final", "instruction": "Please calculate Answer[0]*Answer[1].", "depends_on": ["0", "1"]}]
        answer = str(_answer(root) * _answer(child))
        items.append({"id": item, "question": "composite", "answer": answer, "plan": plan,
                      "subtask_answers": {"0": str(_answer(root)), "1": str(_answer(child)), "final": answer},
                      "meta": {"step_question_ids": {"0": root, "1": child}}, "rel_tol": 0})
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def _candidate(spec: str, value: str | None, failure: str | None, cost: float) -> dict[str, Any]:
    return {"agent_id": spec.rsplit("#", 1)[1] + "/algebra", "model": spec, "value": value, "score": 1.0,
            "cost_usd": cost, "input_tokens": 10, "output_tokens": 5, "failure": failure,
            "error": None if failure is None else f"{failure}: no recording"}


def _row(item: str, spec: str, outcome: tuple[str, str]) -> dict[str, Any]:
    """A row of item `item`: each sub-question 'right', 'wrong' or 'none' (a no_recording failure)."""
    steps, values = [], []
    for step_id, (state, source) in enumerate(zip(outcome, COMPOSITES[item], strict=True)):
        value = {"right": str(_answer(source)), "wrong": "999", "none": None}[state]
        failure = "no_recording" if state == "none" else None
        steps.append({"id": str(step_id), "agent": None, "value": value,
                      "status": "failed" if value is None else "done", "depends_on": [] if step_id == 0 else ["0"],
                      "reference": str(_answer(source)), "correct": state == "right", "domain": "math",
                      "candidates": [_candidate(spec, value, failure, 0.0 if value is None else 0.01)]})
        values.append(value)
    correct = outcome == ("right", "right")
    steps.append({"id": "final", "agent": "tool/calculator", "value": "x" if correct else None,
                  "status": "done" if correct else "failed", "depends_on": ["0", "1"], "reference": "?",
                  "correct": correct, "domain": None, "candidates": []})
    cost = sum(c["cost_usd"] for step in steps for c in step["candidates"])
    return {"id": item, "reference": "?", "answer": "x" if correct else None, "correct": correct,
            "status": "done" if correct else "failed",
            "usage": {"calls": 2, "input_tokens": 20, "output_tokens": 10, "cost_usd": cost, "total_tokens": 30},
            "latency_s": 0.1, "steps": steps, "notes": []}


R, W, N = "right", "wrong", "none"
OUTCOMES = {
    # A lacks q3: c1 is lost to the wrong Answer[0] before q3 is asked, c2 to the missing recording of q3.
    "A": {"c0": (R, R), "c1": (W, N), "c2": (N, N), "c3": (R, R), "c4": (R, R)},
    # B lacks q4 (c2, c4).
    "B": {"c0": (W, R), "c1": (R, R), "c2": (W, N), "c3": (R, R), "c4": (R, N)},
    # ReSo asks B on c4's second step, and loses c3 to a wrong Answer[0] (the link then unrecorded).
    "reso": {"c0": (R, R), "c1": (R, R), "c2": (R, R), "c3": (W, N), "c4": (R, N)},
}


@pytest.fixture()
def bench(tmp_path: Path) -> tuple[Path, dict[str, dict[str, Any]]]:
    replay = write_replay(tmp_path / "recorded.jsonl")
    dataset = write_dataset(tmp_path / "composites.jsonl")
    out = tmp_path / "bench"
    summaries = {}
    for name, outcomes in OUTCOMES.items():
        spec = f"replay:{replay}#{'B' if name == 'reso' else name}"
        method = "reso" if name == "reso" else f"single:{name}/algebra"
        folder = write_run(out / f"test-{name}", [_row(item, spec, outcome) for item, outcome in outcomes.items()],
                           method=method, dataset=str(dataset))
        summaries[name] = {**json.loads((folder / "summary.json").read_text()), "run": folder.name}
    return out, summaries


def test_original_questions_compute_linked_constants_from_the_references(tmp_path):
    problems = {p.id: p for p in load_dataset(write_dataset(tmp_path / "composites.jsonl"))}
    assert original_questions(problems["c1"]) == {"0": _text("q2", "12"), "1": _text("q3", "13")}


def test_complete_items_are_read_from_the_recordings_of_the_original_sub_questions(bench):
    out, _ = bench
    problems = {p.id: p for p in load_dataset(json.loads((out / "test-A" / "summary.json").read_text())["dataset"])}
    singles = [load_run(out / "test-A"), load_run(out / "test-B")]
    ids = sorted(COMPOSITES)
    # c1 counts although A never asked q3 itself: a wrong Answer[0] came first.
    assert unrecorded_items(singles[0], problems, ids) == {"c1", "c2"}
    assert unrecorded_items(singles[1], problems, ids) == {"c2", "c4"}
    assert complete_items(singles, problems, ids) == ["c0", "c3"]
    # Without the dataset, what the runs show stands in: only the recordings they missed with right parents.
    assert complete_items(singles, None, ids) == ["c0", "c1", "c3"]


def test_a_missing_recording_behind_a_wrong_parent_is_a_wrong_answer(bench):
    out, _ = bench
    a = load_run(out / "test-A")
    assert [missed_recording(a.rows[item]) for item in sorted(COMPOSITES)] == [False, False, True, False, False]
    # An unlinked step loses to its missing recording whatever its parent answered.
    assert missed_recording(a.rows["c1"], linked=set()) is True


def test_the_gain_over_the_best_single_is_split_by_cause(bench):
    out, _ = bench
    reso, a = load_run(out / "test-reso"), load_run(out / "test-A")
    assert gain_by_cause(reso, a, sorted(COMPOSITES)) == {
        "won_missing_recording": 1,   # c2: A had no recording of q3
        "won_wrong_answer": 1,        # c1: A answered Answer[0] wrong
        "lost_missing_recording": -1,  # c4: ReSo asked B, which has no recording of q4
        "lost_wrong_answer": -1,      # c3: ReSo answered Answer[0] wrong
        "net": 0,
    }
    assert gain_by_cause(a, a, sorted(COMPOSITES))["net"] == 0


def test_the_table_gives_every_headline_on_all_items_and_on_the_complete_ones(bench):
    out, summaries = bench
    chosen = [("reso", summaries["reso"]), ("best single: A", summaries["A"]), ("single B", summaries["B"])]
    rows = benchmark_rows(out, chosen, 1, [summaries["A"], summaries["B"]])
    reso, best, other = rows
    assert [row["n"] for row in rows] == [5, 5, 5] and [row["n_complete"] for row in rows] == [2, 2, 2]
    assert (reso["accuracy"], best["accuracy"], other["accuracy"]) == (0.6, 0.6, 0.4)
    assert (reso["accuracy_complete"], best["accuracy_complete"], other["accuracy_complete"]) == (0.5, 1.0, 0.5)
    assert reso["diff_vs_best_single"] == 0.0 and reso["diff_vs_best_single_complete"] == -0.5
    assert best["diff_vs_best_single_complete_ci95"] == [0.0, 0.0]
    assert reso["cost_vs_best_single_complete"] == pytest.approx(0.03 / 0.04)
    assert reso["cost_usd_complete"] == pytest.approx(0.03) and best["cost_usd_complete"] == pytest.approx(0.04)
    assert reso["interval_method"] == CLUSTER_METHOD and reso["interval_method_complete"] == CLUSTER_METHOD
    low, high = reso["accuracy_complete_ci95"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    assert reso["gain_by_cause"]["won_missing_recording"] == 1 and reso["gain_by_cause"]["net"] == 0
    assert best["gain_by_cause"] == {"won_missing_recording": 0, "won_wrong_answer": 0, "lost_missing_recording": 0,
                                     "lost_wrong_answer": 0, "net": 0}
    assert other["gain_by_cause"]["net"] == -1
    json.dumps(rows)  # what `reso demo --json` prints


def test_comparison_rows_of_the_demo_carry_the_complete_items(bench):
    out, summaries = bench
    rows = comparison_rows(out, [{**summaries["reso"], "label": "reso"}, summaries["A"], summaries["B"]])
    assert [row["method"] for row in rows] == ["reso", "best single model on the test (chosen with its labels): A"]
    # The single model with the best training record, marked by the job, gets a row of its own.
    marked = comparison_rows(out, [{**summaries["reso"], "label": "reso"}, summaries["A"],
                                   {**summaries["B"], "best_on_training": True}])
    assert [row["method"] for row in marked] == ["reso", "best single model on the test (chosen with its labels): A",
                                                 "best single model on the training record: B"]
    both = comparison_rows(out, [{**summaries["reso"], "label": "reso"}, {**summaries["A"], "best_on_training": True},
                                 summaries["B"]])
    assert [row["method"] for row in both] == [
        "reso", "best single model on the test (chosen with its labels): A (also the best training record)"]
    assert rows[0]["n_complete"] == 2 and rows[0]["accuracy_complete"] == 0.5
    assert rows[0]["gain_by_cause"]["lost_missing_recording"] == -1


def _printed(rows: list[dict[str, Any]]) -> str:
    from rich.console import Console

    from reso.evals.cli.demo_tables import print_benchmark

    console = Console(width=132, record=True, file=io.StringIO())
    print_benchmark(console, "Bench", rows)
    return console.export_text()


def test_reso_demo_prints_the_complete_items_and_the_causes_beside_the_full_set(bench):
    out, summaries = bench
    rows = benchmark_rows(out, [("reso", summaries["reso"]), ("best single: A", summaries["A"])], 1,
                          [summaries["A"], summaries["B"]])
    text = _printed(rows)
    assert max(map(len, text.splitlines())) <= 132
    assert "Bench: 5 composites" in text and "the 2 of 5 composites" in " ".join(text.split())
    reso_lines = [line for line in text.splitlines() if line.startswith("│ reso")]
    assert len(reso_lines) == 2
    assert "60.0%" in reso_lines[0] and "+1/−1 · +1/−1" in reso_lines[0]  # all items, then the causes
    assert "50.0%" in reso_lines[1] and "-50.0" in reso_lines[1]  # the complete items
    assert text.count(f"95 % intervals: {CLUSTER_METHOD}") == 2
    complete = [{**row, "n_complete": row["n"]} for row in rows]
    assert "All 5 composites are complete" in _printed(complete)
