"""Budgets per run and per question: refused before the call, a run that runs out stops cleanly with a
partial report, loses nothing it computed, and resumes under a higher budget."""

from __future__ import annotations

import asyncio
import json

from reso.agents.adapters.failures import FailureKind
from reso.agents.dadb.sqlite import DADB
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import parse_method
from reso.evals.reports.report import write_run_report
from reso.evals.runner import run_eval
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.settings import ReSoSettings
from tests.unit_tests.test_exactly_once import _learning_team, _recorded_calls, _rows, _run
from tests.unit_tests.test_runner import _problem

# Scripted answers cost 15 tokens a call; the exact tool 0. An item makes 4 scripted calls and 1 tool call.
ITEM_TOKENS = 4 * 15


def test_a_question_budget_consults_its_run_budget_and_both_spend():
    from tests.engine_fakes import scripted_pool

    agent = scripted_pool(["a"]).get("a")
    run = Budget(max_tokens=100, scope="run")
    first, second = Budget(max_tokens=80, parent=run), Budget(parent=run)
    first.spend(70, 0.0)
    own = first.refusal(agent, "x" * 80)
    assert own is not None and own.kind is FailureKind.BUDGET_EXCEEDED, "over the question's own budget"
    assert second.refusal(agent, "x" * 80) is None
    second.spend(30, 0.0)
    refusal = second.refusal(agent, "")
    assert refusal is not None and refusal.kind is FailureKind.RUN_BUDGET_EXCEEDED
    reason = refusal.reason
    assert reason == "run token budget of 100 spent (100 used)" and second.exceeded == reason
    assert run.stop() == reason and run.exceeded == reason


def test_a_run_token_budget_stops_calls_of_items_in_flight_and_a_rerun_resumes(tmp_path):
    problems = [_problem(i) for i in range(6)]
    team, strong = _learning_team(problems, DADB(tmp_path / "d.sqlite"))
    out = tmp_path / "out"
    summary = _run(out, problems, team, concurrency=1, budget_tokens=2 * ITEM_TOKENS + 20)
    assert summary["stopped"].startswith("run token budget of 140 spent")
    assert summary["n"] == 2 and summary["items"] == 6 and summary["items_left"] == 4
    # The third item's second sub-question would overrun: refused before it is asked; nothing else starts.
    assert len(strong.calls) == 2 + 2 + 1
    # An item cut short by the run budget is not written, and its updates are not learned.
    rows = _rows(out)
    assert all(row["status"] == "done" for row in rows)
    assert team.dadb.total_visits() == _recorded_calls(out)
    report = write_run_report(out).read_text()
    assert "Stopped early" in report and "partial" in report
    assert json.loads((out / "summary.json").read_text())["stopped"] == summary["stopped"]

    done = {row["id"] for row in rows}
    calls_before = len(strong.calls)
    summary = _run(out, problems, team, concurrency=3, budget_tokens=100 * ITEM_TOKENS)
    assert summary["stopped"] is None and summary["n"] == 6
    assert sorted(row["id"] for row in _rows(out)) == [f"p{i}" for i in range(6)]
    assert len(strong.calls) - calls_before == 2 * (6 - len(done)), "finished items are not asked again"
    assert team.dadb.total_visits() == _recorded_calls(out) == 6 * 5


def test_a_spent_run_budget_starts_nothing(tmp_path):
    problems = [_problem(i) for i in range(3)]
    team, strong = _learning_team(problems, DADB(tmp_path / "d.sqlite"))
    summary = _run(tmp_path / "out", problems, team, budget_seconds=0.0)
    assert summary["stopped"] == "run wall-time budget of 0s spent"
    assert summary["n"] == 0 and strong.calls == []
    summary = _run(tmp_path / "usd", problems, team, budget_usd=0.0)
    assert summary["stopped"].startswith("run USD budget of 0 spent") and strong.calls == []


def test_a_question_budget_marks_only_that_item(tmp_path):
    problems = [_problem(i) for i in range(2)]
    team, _ = _learning_team(problems, DADB(tmp_path / "d.sqlite"))
    config = EvalConfig(dataset="unit", method=parse_method("reso", team.pool), out=tmp_path / "out",
                        settings=ReSoSettings().replace(
                            {"asking.rule": "fixed", "limits.max_tokens": ITEM_TOKENS // 2}, mode="train"),
                        command=["reso", "eval"], run=RunOptions(concurrency=2))
    summary = asyncio.run(run_eval(config, problems, team))
    rows = _rows(tmp_path / "out")
    assert summary["stopped"] is None and len(rows) == 2
    assert {row["status"] for row in rows} == {"budget_exceeded"}
    assert all(row["usage"]["total_tokens"] <= ITEM_TOKENS // 2 for row in rows)
    # Refused calls were never made: they are recorded, but not learned as failures of their agents.
    refused = [c for row in rows for step in row["steps"] for c in step["candidates"]
               if c["failure"] == FailureKind.BUDGET_EXCEEDED]
    assert refused and all(c["reward"] is None and c["error"].startswith("BudgetExceeded: ") for c in refused)
    assert team.dadb.total_visits() == sum(len(row["dadb_updates"]) for row in rows)
    assert team.dadb.total_visits() == _recorded_calls(tmp_path / "out") - len(refused)


def test_the_run_budget_reaches_questions_through_the_run_context():
    run = Budget(max_usd=1.0, scope="run")
    settings = ReSoSettings().replace({"limits.max_tokens": 50, "limits.max_seconds": 9.0})
    question = RunContext(settings=settings, budget=run).question_budget()
    assert question.parent is run and (question.max_tokens, question.max_usd, question.max_seconds) == (50, None, 9.0)
    assert RunContext().question_budget().parent is None
