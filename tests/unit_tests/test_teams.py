"""`reso teams`: weighted votes replayed from oracle runs (hand-made runs with hand-counted votes, costs and
the cost cap), the grading of sub-questions to a millionth, its errors, and on real recorded answers that a
replayed single agent is what `reso eval --method single:` gets on the same items."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.defaults import data_dir
from reso.evals.cli import app
from reso.evals.reports.compare import CompareError
from reso.evals.reports.teams import (
    HINDSIGHT,
    REFERENCE,
    SINGLE,
    TEAM,
    read_recorded_answers,
    search_teams,
    study_teams,
    team_cost,
    team_votes,
)
from tests.run_fixtures import write_run

AGENTS = ("a", "b", "c", "d")


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def oracle_row(item: str, steps: Sequence[tuple[str, Mapping[str, str | None]]],
               prices: Mapping[str, float]) -> dict:
    """One oracle results line: each step a reference and every agent's value (each agent's call costs
    its price), then the exact tool's integration step."""
    rendered = []
    for index, (reference, values) in enumerate(steps):
        candidates = [{"agent_id": agent, "model": f"replay:fixture#{agent}", "value": value,
                       "score": 1.0 if value == reference else 0.0, "cost_usd": prices[agent]}
                      for agent, value in values.items()]
        rendered.append({"id": str(index), "reference": reference, "candidates": candidates})
    rendered.append({"id": "final", "reference": "0", "candidates": [
        {"agent_id": "tool/calculator", "model": "tool:calculator", "value": None, "score": None, "cost_usd": 0.0}]})
    cost = sum(prices[agent] for _, values in steps for agent in values)
    return {"id": item, "correct": False, "usage": {"cost_usd": cost, "total_tokens": 0}, "steps": rendered}


PRICES = {"a": 1.0, "b": 0.1, "c": 0.1, "d": 0.1}


def one_step_run(folder: Path, rows: Sequence[Mapping[str, str | None]], reference: str = "1",
                 method: str = "oracle") -> Path:
    """An oracle run of one-sub-question items, item i answered as `rows[i]` says."""
    return write_run(folder, [oracle_row(f"q{i}", [(reference, values)], PRICES) for i, values in enumerate(rows)],
                     method=method)


def test_sub_questions_are_graded_and_grouped_to_a_millionth(tmp_path):
    # 228 is within the checker's 1 % of 226 (the oracle's scorer gives it 0.99), but the composites grade
    # to a millionth: wrong, and a group of its own.
    run = one_step_run(tmp_path / "run", [{"a": "226", "b": "228", "c": "226.0000001", "d": None}], reference="226")
    recorded = read_recorded_answers(run)
    assert recorded.agents == AGENTS
    assert recorded.right.tolist() == [[True, False, True, False]]
    assert recorded.answer.tolist() == [[0, 1, 0, -1]]


def test_votes_weigh_each_agent_by_its_record(tmp_path):
    # On the choosing run a is right on all five items, b, c and d on two of them: weights 1, 0.4, 0.4, 0.4.
    rows = [{"a": "1", "b": "1" if i < 2 else "2", "c": "1" if i < 2 else "3", "d": "1" if i < 2 else "4"}
            for i in range(5)]
    choose = read_recorded_answers(one_step_run(tmp_path / "choose", rows))
    weights = choose.record()
    assert weights.tolist() == pytest.approx([1.0, 0.4, 0.4, 0.4])
    test = read_recorded_answers(one_step_run(tmp_path / "test", [{"a": "1", "b": "9", "c": "9", "d": "9"}]))
    # b and c together (0.8) do not outvote a (1.0); b, c and d (1.2) do.
    assert team_votes(test, [0, 1, 2], weights).tolist() == [True]
    assert team_votes(test, [0, 1, 2, 3], weights).tolist() == [False]
    assert team_cost(test, [0, 1, 2, 3]).tolist() == pytest.approx([1.3])


def test_a_composite_is_right_only_when_every_sub_question_is(tmp_path):
    steps = [("1", {"a": "1", "b": "1", "c": "1", "d": "1"}), ("2", {"a": "5", "b": "2", "c": "5", "d": "2"})]
    run = write_run(tmp_path / "run", [oracle_row("q0", steps, PRICES)], method="oracle")
    recorded = read_recorded_answers(run)
    equal = recorded.record() * 0 + 1.0
    assert team_votes(recorded, [1], equal).tolist() == [True]
    assert team_votes(recorded, [0], equal).tolist() == [False]
    # a, b, c: 5 has two votes to 2's one on the second sub-question.
    assert team_votes(recorded, [0, 1, 2], equal).tolist() == [False]
    assert team_cost(recorded, [0, 1]).tolist() == pytest.approx([2.2])


def test_search_keeps_to_the_cost_cap(tmp_path):
    # a (price 1) is right on all four items; b and c (0.1 each) on three, d on two, and on every item two of
    # b, c and d are right together: their vote is right on all four at 0.3x a's cost.
    rows = [{"a": "1", "b": "1", "c": "1", "d": "7"}, {"a": "1", "b": "1", "c": "8", "d": "1"},
            {"a": "1", "b": "6", "c": "1", "d": "1"}, {"a": "1", "b": "1", "c": "1", "d": "5"}]
    recorded = read_recorded_answers(one_step_run(tmp_path / "run", rows))
    weights = recorded.record()
    assert weights.tolist() == pytest.approx([1.0, 0.75, 0.75, 0.5])
    single, team = search_teams(recorded, weights, max_size=3, cost_cap=1.0)
    assert (single.agents, single.correct, single.cost_ratio) == (("a",), 4, 1.0)
    assert (team.agents, team.correct, team.cost_ratio) == (("b", "c", "d"), 4, pytest.approx(0.3))
    # Under 0.25x no three fit; a pair ties where its members disagree, and the tie goes to the member listed
    # first, so no pair beats b alone (three of four at 0.1x).
    _, capped = search_teams(recorded, weights, max_size=3, cost_cap=0.25)
    assert (capped.agents, capped.correct) == (("b",), 3)
    # In pairs with a, a outvotes its partner: a alone is as right and cheaper.
    _, pairs = search_teams(recorded, weights, max_size=2, cost_cap=5.0)
    assert (pairs.agents, pairs.correct) == (("a",), 4)


def test_study_scores_the_choice_on_the_test_run_beside_hindsight(tmp_path):
    # On the choosing run b and c are right, on the test run only d is.
    choose = one_step_run(tmp_path / "choose", [{"a": "2", "b": "1", "c": "1", "d": "3"}] * 3)
    test = one_step_run(tmp_path / "test", [{"a": "2", "b": "4", "c": "5", "d": "1"}] * 3)
    study = study_teams(choose, test, max_size=2, cost_cap=1.0)
    assert study.single.agents == ("b",)
    assert study.hindsight.agents == ("d",)
    runs = {run.label: run for run in study.comparison.runs}
    assert runs[SINGLE].accuracy == 0.0
    assert runs[HINDSIGHT].accuracy == 1.0
    assert runs[TEAM].cost_usd == pytest.approx(0.3 * len(study.team.agents))
    assert study.any_right[HINDSIGHT] == 1.0


def test_a_reference_agent_sets_the_cost_cap_and_the_first_row(tmp_path):
    # b alone is the best single agent (right on all three at 0.1); against a (price 1) a cap of 0.15 leaves
    # room for one cheap agent: b.
    run = one_step_run(tmp_path / "run", [{"a": "2", "b": "1", "c": "3", "d": "4"}] * 3)
    study = study_teams(run, run, max_size=2, cost_cap=0.15, reference="a")
    assert study.single.agents == ("a",)
    assert (study.team.agents, study.team.cost_ratio) == (("b",), pytest.approx(0.1))
    runs = {run.label: run for run in study.comparison.runs}
    assert runs[REFERENCE].accuracy == 0.0 and runs[TEAM].accuracy == 1.0
    assert runs[TEAM].vs_reference.cost_ratio == pytest.approx(0.1)
    result = invoke("teams", str(run), str(run), "--reference", "e")
    assert result.exit_code == 2 and "--reference 'e': no agent of both runs is that" in result.output


def test_refuses_runs_that_are_not_oracle_runs_and_bad_limits(tmp_path, monkeypatch):
    oracle = one_step_run(tmp_path / "oracle", [{"a": "1", "b": "1", "c": "1", "d": "1"}])
    single = one_step_run(tmp_path / "single", [{"a": "1", "b": "1", "c": "1", "d": "1"}], method="single:a")
    with pytest.raises(CompareError, match="single.*oracle run"):
        study_teams(oracle, single)
    result = invoke("teams", str(oracle), str(single))
    assert result.exit_code == 2
    assert "error:" in result.output and "reso eval --method oracle" in result.output
    result = invoke("teams", str(oracle), str(oracle), "--max-size", "0")
    assert result.exit_code == 2 and "max_size must be >= 1" in result.output
    result = invoke("teams", str(oracle), str(oracle), "--max-size", "4")
    assert result.exit_code == 0, result.output
    with monkeypatch.context() as patch:
        patch.setattr("reso.evals.reports.teams.MAX_TEAMS", 14)
        result = invoke("teams", str(oracle), str(oracle), "--max-size", "4")
    assert result.exit_code == 2 and "15 teams of 4 agents to score, more than 14; lower --max-size" in result.output
    result = invoke("teams", str(oracle), str(tmp_path / "missing"))
    assert result.exit_code == 2 and "missing: not a folder" in result.output


def test_cli_table_names_the_teams(tmp_path):
    choose = one_step_run(tmp_path / "choose", [{"a": "2", "b": "1", "c": "1", "d": "3"}] * 3)
    result = invoke("teams", str(choose), str(choose), "--max-size", "2", "--cost-cap", "1")
    assert result.exit_code == 0, result.output
    assert "chosen team: b" in result.output
    assert "some member right on 100.0% of the test composites" in result.output


def test_a_replayed_single_agent_is_what_reso_eval_gets_on_recorded_answers(tmp_path):
    pool = str(data_dir() / "zeroeval_pool.yaml")
    runs = {}
    for name, dataset, method in (("choose", "gsm8k-l-mas-easy-train", "oracle"),
                                  ("test", "gsm8k-l-mas-easy-test", "oracle")):
        result = invoke("eval", "--dataset", dataset, "--limit", "8", "--pool", pool, "--method", method,
                        "--out", str(tmp_path / name))
        assert result.exit_code == 0, result.output
        runs[name] = tmp_path / name
    result = invoke("teams", str(runs["choose"]), str(runs["test"]), "--max-size", "2", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    agent = report["chosen_single"]["agents"][0]
    replayed = next(run for run in report["comparison"]["runs"] if run["label"] == SINGLE)
    result = invoke("eval", "--dataset", "gsm8k-l-mas-easy-test", "--limit", "8", "--pool", pool,
                    "--method", f"single:{agent}", "--out", str(tmp_path / "single"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "single" / "summary.json").read_text(encoding="utf-8"))
    assert replayed["correct"] == summary["correct"]
    assert replayed["cost_usd"] == pytest.approx(summary["cost_usd"])
    oracle = json.loads((runs["test"] / "summary.json").read_text(encoding="utf-8"))
    assert report["comparison"]["runs"][-1]["correct"] == oracle["correct"]
