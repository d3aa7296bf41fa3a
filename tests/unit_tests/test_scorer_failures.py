"""A scorer that fails is visible: counted in summary.json and the run report, an error when it always fails."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import parse_method
from reso.evals.reports.report import write_run_report
from reso.evals.runner import run_eval
from reso.graphs.settings import ReSoSettings
from reso.reward.base import SCORER_FAILED, Score, ScoreItem, Scorer, failed_score, scorer_failures
from tests.engine_fakes import scripted_team
from tests.unit_tests.test_runner import _problem, _team


class FlakyScorer(Scorer):
    """Fails on answers that contain `fail_on` (every answer when it is empty), else scores 1."""

    name = "flaky"

    def __init__(self, fail_on: str) -> None:
        self.fail_on = fail_on

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [failed_score("judge call failed: TimeoutError") if self.fail_on in item.answer else Score(1.0)
                for item in items]


def _run(tmp_path: Path, scorer: Scorer) -> dict:
    problems = [_problem(i) for i in range(3)]
    base, _ = _team(problems)
    team = scripted_team({name: base.models[name] for name in ("strong", "weak")},
                         lambda s: ["calc"] if s.startswith("Please calculate") else ["strong", "weak"], scorer)
    config = EvalConfig(dataset="unit", method=parse_method("reso", team.pool), out=tmp_path,
                        settings=ReSoSettings().replace({"asking.k": 2}, mode="test"), command=["reso", "eval"], run=RunOptions(concurrency=2))
    return asyncio.run(run_eval(config, problems, team))


def test_failures_are_counted_in_the_summary_and_the_report(tmp_path: Path) -> None:
    # Every part B answer ("\\boxed{3}") and the weak agent's part A of p0 (2 + 1) fail; the rest score.
    summary = _run(tmp_path, FlakyScorer(fail_on="{3}"))
    failures = summary["scorer_failures"]
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    recorded = [c for row in rows for step in row["steps"] for c in step["candidates"]]
    expected = sum(1 for c in recorded if c["score_failed"])
    assert failures["failed"] == expected > 0 and failures["scored"] > failures["failed"]
    assert all(c["score_failed"] == str(c["score_reason"]).startswith(SCORER_FAILED) for c in recorded)
    assert failures["first"] == "scorer failed: judge call failed: TimeoutError"
    assert json.loads((tmp_path / "summary.json").read_text())["scorer_failures"] == failures
    report = write_run_report(tmp_path).read_text()
    assert f"**CRM failures**: {expected} of {failures['scored']} scores failed" in report


def test_every_score_failing_is_an_error_in_the_report(tmp_path: Path) -> None:
    summary = _run(tmp_path, FlakyScorer(fail_on=""))
    assert summary["scorer_failures"]["failed"] == summary["scorer_failures"]["scored"] > 0
    assert "**Error: the CRM failed on every answer it scored**" in write_run_report(tmp_path).read_text()


def test_scorer_failures_counts_only_scored_candidates_by_their_flag() -> None:
    rows = [{"score": 0.5, "score_failed": True, "score_reason": "scorer failed: x"},
            {"score": None, "score_failed": False, "score_reason": None},
            {"score": 0.9, "score_failed": False, "score_reason": "empty answer"},
            {"score": 0.5, "score_failed": False, "score_reason": "scorer failed: a verdict that reads like one"}]
    assert scorer_failures(rows) == {"failed": 1, "scored": 3, "first": "scorer failed: x"}


def test_records_written_before_the_flag_are_counted_by_their_reason() -> None:
    """A results folder of the release before `score_failed` still resumes and reports its failures."""
    rows = [{"score": 0.5, "score_reason": "scorer failed: timeout"},
            {"score": 0.9, "score_reason": "empty answer"},
            {"score": None, "score_reason": None}]
    assert scorer_failures(rows) == {"failed": 1, "scored": 2, "first": "scorer failed: timeout"}
