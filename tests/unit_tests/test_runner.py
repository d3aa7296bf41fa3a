"""Batch evaluation: results appended per item, resume without loss or duplicates, summary fields,
training records, and the baselines' agent pinning."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from reso.evals.datasets import Problem
from reso.evals.datasets.problem import DEFAULT_REL_TOL, EXACT_REL_TOL
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import MethodError, parse_method
from reso.evals.runner import run_eval
from reso.graphs.settings import ReSoSettings
from tests.engine_fakes import ScriptedAnswerer, scripted_team


def _problem(index: int, right: bool = True) -> Problem:
    a, b = index + 2, 3
    plan = [
        {"id": "0", "instruction": f"Q{index} part A", "depends_on": []},
        {"id": "1", "instruction": f"Q{index} part B", "depends_on": ["0"]},
        {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1].",
         "depends_on": ["0", "1"]},
    ]
    return Problem(id=f"p{index}", question=f"question {index}", answer=str(a * b), plan=plan,
                   subtask_answers={"0": str(a), "1": str(b), "final": str(a * b)})


def _answers(problems, wrong_ids=()):
    answers = {}
    for p in problems:
        a = int(p.subtask_answers["0"])
        index = p.id.removeprefix("p")
        answers[f"Q{index} part A"] = f"\\boxed{{{a + (1 if p.id in wrong_ids else 0)}}}"
        answers[f"Q{index} part B"] = "\\boxed{3}"
    return answers


def _team(problems, wrong_ids=()):
    strong = ScriptedAnswerer(answers=_answers(problems, wrong_ids), calls=[])
    weak = ScriptedAnswerer(answers=_answers(problems, [p.id for p in problems]), calls=[])

    def choose(subtask: str) -> list[str]:
        return ["calc"] if subtask.startswith("Please calculate") else ["strong", "weak"]

    return scripted_team({"strong": strong, "weak": weak}, choose), strong


def _run(tmp_path: Path, problems, method="reso", mode="test", team=None, **run):
    """`run`: the run's options besides its concurrency (`RunOptions`: budget_usd=…)."""
    team = team or _team(problems)[0]
    config = EvalConfig(dataset="unit", method=parse_method(method, team.pool), out=tmp_path,
                        settings=ReSoSettings().replace({"asking.rule": "fixed"}, mode=mode),
                        command=["reso", "eval"], run=RunOptions(concurrency=4, **run))
    return asyncio.run(run_eval(config, problems, team))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_results_summary_and_accuracy(tmp_path):
    problems = [_problem(i) for i in range(6)]
    team, _ = _team(problems, wrong_ids=["p1"])
    summary = _run(tmp_path, problems, team=team)
    rows = _lines(tmp_path / "results.jsonl")
    assert sorted(row["id"] for row in rows) == [f"p{i}" for i in range(6)]
    assert {row["id"]: row["correct"] for row in rows}["p1"] is False
    assert summary["n"] == 6 and summary["correct"] == 5
    assert summary["accuracy"] == pytest.approx(5 / 6)
    for key in ("dataset", "method", "n", "accuracy", "total_tokens", "cost_usd", "latency_s", "seed",
                "command", "versions"):
        assert key in summary
    assert summary["command"] == ["reso", "eval"] and "langgraph" in summary["versions"]
    assert json.loads((tmp_path / "summary.json").read_text())["accuracy"] == summary["accuracy"]


def test_rerun_resumes_without_duplicates_and_drops_a_torn_line(tmp_path):
    problems = [_problem(i) for i in range(8)]
    team, strong = _team(problems)
    _run(tmp_path, problems[:3], team=team)
    results = tmp_path / "results.jsonl"
    with results.open("a") as handle:
        handle.write('{"id": "p3", "answer": "1')  # a crash mid-write
    calls_before = len(strong.calls)
    summary = _run(tmp_path, problems, team=team)
    rows = _lines(results)
    assert sorted(row["id"] for row in rows) == [f"p{i}" for i in range(8)]
    assert summary["n"] == 8
    # Only the five unfinished items were asked again (two sub-questions each).
    assert len(strong.calls) - calls_before == 5 * 2


def test_train_mode_writes_labelled_crm_records(tmp_path):
    problems = [_problem(i) for i in range(3)]
    _run(tmp_path, problems, mode="train")
    records = _lines(tmp_path / "crm_records.jsonl")
    by_agent = {}
    for record in records:
        assert set(record) >= {"instruction", "answer", "label", "model", "question_id", "reference"}
        by_agent.setdefault(record["agent_id"], []).append(record["label"])
    # strong is always right; weak is right on part B only; the calculator is right on every product.
    assert by_agent["strong"] == [1] * 6
    assert sorted(by_agent["weak"]) == [0, 0, 0, 1, 1, 1]
    assert by_agent["calc"] == [1, 1, 1]
    # Models by name (`fake:strong` -> `strong`), as the CRM trained on these records keys its priors.
    assert {record["model"] for record in records} == {"strong", "weak", "calculator"}


@pytest.mark.parametrize(("rel_tol", "graded_right"), [(DEFAULT_REL_TOL, True), (EXACT_REL_TOL, False)])
def test_the_dataset_says_how_close_an_answer_must_be(tmp_path, rel_tol, graded_right):
    # Part A's answer is 200; every agent answers 201 (0.5 % off), so the product is 603 for 600.
    problem = dataclasses.replace(_problem(198), rel_tol=rel_tol)
    team, _ = _team([problem], wrong_ids=[problem.id])
    _run(tmp_path, [problem], mode="train", team=team)
    row = _lines(tmp_path / "results.jsonl")[0]
    assert (row["answer"], row["reference"]) == ("603", "600")
    assert row["correct"] is graded_right
    assert {step["id"]: step["correct"] for step in row["steps"]} == {"0": graded_right, "1": True,
                                                                      "final": graded_right}
    labels = {(r["question_id"], r["agent_id"]): r["label"] for r in _lines(tmp_path / "crm_records.jsonl")}
    assert labels[("p198/0", "strong")] == labels[("p198/0", "weak")] == int(graded_right)
    # Part B's reference assumes part A's exact answer (as the DADB's credit does, `DagRun.sound_context`):
    # 201 for 200 is graded right within the tolerance, but B's answers get no label either way.
    assert ("p198/1", "strong") not in labels and ("p198/1", "weak") not in labels


def test_single_agent_baseline_pins_the_agent_and_the_exact_tool(tmp_path):
    problems = [_problem(i) for i in range(2)]
    _run(tmp_path, problems, method="single:weak")
    rows = _lines(tmp_path / "results.jsonl")
    for row in rows:
        agents = {step["id"]: step["agent"] for step in row["steps"]}
        assert agents == {"0": "weak", "1": "weak", "final": "calc"}
        assert row["correct"] is False


def test_oracle_picks_a_right_candidate_when_any_is_right(tmp_path):
    problems = [_problem(i) for i in range(3)]
    team, _ = _team(problems, wrong_ids=["p0", "p1", "p2"])  # strong wrong on part A; weak wrong too
    summary = _run(tmp_path, problems, method="oracle", team=team)
    assert summary["accuracy"] == 0.0
    summary = _run(tmp_path / "again", problems, method="oracle")
    assert summary["accuracy"] == 1.0


def _plain_team(questions):
    """A question without a plan or per-step answers is one step, id "final"; `right` answers it right,
    `wrong` (asked first) does not."""
    right = ScriptedAnswerer(answers={q.question: f"\\boxed{{{q.answer}}}" for q in questions}, calls=[])
    wrong = ScriptedAnswerer(answers={q.question: "\\boxed{0}" for q in questions}, calls=[])
    return scripted_team({"right": right, "wrong": wrong}, lambda subtask: ["wrong", "right"])


def test_the_final_answer_is_the_reference_of_a_plain_questions_step(tmp_path):
    questions = [Problem(id=f"q{i}", question=f"How many apples are in box {i}?", answer=str(i + 10))
                 for i in range(3)]
    summary = _run(tmp_path / "oracle", questions, method="oracle", team=_plain_team(questions))
    assert summary["accuracy"] == 1.0
    rows = _lines(tmp_path / "oracle" / "results.jsonl")
    assert {(step["id"], step["agent"], step["correct"]) for row in rows for step in row["steps"]} == {
        ("final", "right", True)}
    team = _plain_team(questions)
    _run(tmp_path / "train", questions, mode="train", team=team)
    # Training learns the ground truth, not the CRM's guess (the fake CRM scores both answers 1).
    assert sorted(team.selector.updates) == [("right", 1.0)] * 3 + [("wrong", 0.0)] * 3
    labels = {(r["question_id"], r["agent_id"]): r["label"]
              for r in _lines(tmp_path / "train" / "crm_records.jsonl")}
    assert labels == {**{(f"q{i}/final", "right"): 1 for i in range(3)},
                      **{(f"q{i}/final", "wrong"): 0 for i in range(3)}}


def test_run_budget_stops_starting_items(tmp_path):
    problems = [_problem(i) for i in range(6)]
    summary = _run(tmp_path, problems, budget_usd=1e-9)
    assert summary["stopped"] and "budget" in summary["stopped"]
    assert summary["n"] < 6


def test_unknown_methods_are_refused():
    team, _ = _team([_problem(0)])
    with pytest.raises(MethodError, match="unknown method"):
        parse_method("best-of-both", team.pool)
    with pytest.raises(MethodError, match="no agent"):
        parse_method("single:nobody", team.pool)
    assert parse_method("cot-sc:strong:5", team.pool).count == 5


def test_reports_for_a_run_and_a_sweep(tmp_path):
    from reso.evals.reports.report import agent_choices, write_run_report, write_sweep_report

    problems = [_problem(i) for i in range(4)]
    _run(tmp_path / "train", problems, mode="train")
    _run(tmp_path / "single", problems, method="single:weak")
    train_report = write_run_report(tmp_path / "train").read_text()
    assert "reso on unit (train)" in train_report and "learning_curve.png" in train_report
    assert (tmp_path / "train" / "agents_heatmap.png").stat().st_size > 0
    assert (tmp_path / "train" / "learning_curve.png").stat().st_size > 0
    rows = [json.loads(line) for line in (tmp_path / "single" / "results.jsonl").read_text().splitlines()]
    assert agent_choices(rows) == {"sub-question": {"weak": 8}, "integration": {"calc": 4}}
    sweep = write_sweep_report(tmp_path).read_text()
    assert "| single | single:weak | unit | test | 4 | 0.0% |" in sweep
    assert "| train | reso | unit | train | 4 | 100.0% |" in sweep
    assert (tmp_path / "accuracy_vs_cost.png").exists()


def test_a_results_file_damaged_in_the_middle_is_refused_not_rewritten(tmp_path):
    from reso.evals.results import ResultsFile, ResultsFormatError

    problems = [_problem(i) for i in range(3)]
    _run(tmp_path, problems)
    results = tmp_path / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join([lines[0], "{broken", *lines[1:]]) + "\n")
    with pytest.raises(ResultsFormatError, match=r"results.jsonl:2: not a JSON object"):
        ResultsFile(results)
    assert len(results.read_text().splitlines()) == 4  # nothing dropped
    results.write_text("\n".join([lines[0], '{"id": "x"}', *lines[1:]]) + "\n")
    with pytest.raises(ResultsFormatError, match=r"results.jsonl:2: result row lacks field 'correct'"):
        ResultsFile(results)
