"""The documentation's figures are rendered from the committed runs (`reso docs`): hand-made blocks against
their JSON, the markers filled and refused, and the project's own README and docs checked against
docs/results/ (a typed number that drifts from its run fails here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.reports.results_doc import fill, render_blocks

ROOT = Path(__file__).resolve().parents[2]

RUN = {
    "world": "many",
    "tables": {"bench": [{"method": "reso", "accuracy": 0.8, "accuracy_ci95": [0.7, 0.9], "cost_usd": 1.5,
                          "diff_vs_best_single": 0.05, "diff_vs_best_single_ci95": [-0.01, 0.11],
                          "cost_vs_best_single": 0.9}]},
    "frontiers": {"bench": {
        "items": 100, "interval_method": "delta method", "best_single": "single:strong",
        "best_single_cost_usd": 0.01, "points": [
            {"label": "reso (answer worth $0.01)", "kind": "reso", "folder": "f1", "cost_per_item_usd": 0.004,
             "cost_usd": 0.4, "accuracy": 0.5, "accuracy_ci95": [0.4, 0.6], "in_router_hull": True},
            {"label": "reso (answer worth $0.1)", "kind": "reso", "folder": "f2", "cost_per_item_usd": 0.009,
             "cost_usd": 0.9, "accuracy": 0.45, "accuracy_ci95": [0.35, 0.55], "in_router_hull": True}],
        "reso_hull": [[0.004, 0.5]], "single_hull": [[0.001, 0.1], [0.01, 0.7]],
        "budgets": [0.001, 0.01], "reso_at": [0.0, 0.5], "single_at": [0.1, 0.7],
        "mean_gain": {"value": -0.15, "ci95": [-0.2, -0.1]}, "worst_gap": {"value": -0.2, "ci95": [-0.3, -0.1]},
        "worst_budget": 0.01, "qnc": {"value": None, "ci95": None}, "gap_closed": {"value": -1.0, "ci95": None},
        "oracle": "oracle (uses labels)"}},
}


def test_each_block_carries_its_runs_figures_with_their_intervals():
    blocks = render_blocks(RUN, {"bench": "Bench"})
    assert set(blocks) == {"frontier-figures", "frontier-bench", "knob-bench", "table-bench"}
    assert blocks["frontier-figures"].splitlines()[2] == (
        "| Bench (100 composites) | strong ($0.0100) | -15.0 [-20.0, -10.0] | -20.0 [-30.0, -10.0] ($0.0100) "
        "| not reached | -100 % |")
    assert blocks["frontier-bench"].splitlines()[2:] == [
        "| $0.00100 | 0.10 | 10.0% | — (cannot go that cheap: 0) | -10.0 |",
        "| $0.01000 | 1.00 | 70.0% | 50.0% | -20.0 |"]
    assert blocks["knob-bench"].splitlines()[2:] == [
        "| reso (answer worth $0.01) | 50.0% [40.0, 60.0] | $0.00400 | yes |",
        "| reso (answer worth $0.1) | 45.0% [35.0, 55.0] | $0.00900 |  |"]
    assert blocks["table-bench"].splitlines()[2] == "| reso | 80.0% [70.0, 90.0] | +5.0 [-1.0, +11.0] | 1.500 | 0.90× |"


def test_fill_replaces_marked_blocks_and_refuses_one_the_run_lacks():
    text = "intro\n<!-- results:a -->\nold\n<!-- /results:a -->\nend\n"
    assert fill(text, {"a": "new"}) == "intro\n<!-- results:a -->\nnew\n<!-- /results:a -->\nend\n"
    with pytest.raises(ValueError, match="results block 'a' is not in runs"):
        fill(text, {}, source="runs")


def test_reso_docs_fills_a_projects_pages_and_check_fails_on_a_stale_one(tmp_path: Path):
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "main.json").write_text(json.dumps(RUN), encoding="utf-8")
    (tmp_path / "README.md").write_text("<!-- results:main.table-bench -->\n<!-- /results:main.table-bench -->\n")
    runner = CliRunner()
    stale = runner.invoke(app, ["docs", "--root", str(tmp_path), "--check"])
    assert stale.exit_code == 1 and "generated tables differ" in stale.output
    assert runner.invoke(app, ["docs", "--root", str(tmp_path)]).exit_code == 0
    assert "| reso | 80.0% [70.0, 90.0]" in (tmp_path / "README.md").read_text()
    assert runner.invoke(app, ["docs", "--root", str(tmp_path), "--check"]).exit_code == 0


def test_the_projects_documentation_is_what_its_committed_runs_render():
    result = CliRunner().invoke(app, ["docs", "--root", str(ROOT), "--check"])
    assert result.exit_code == 0, result.output
    assert list((ROOT / "docs" / "results").glob("*.json")), "no committed run under docs/results"


def test_a_versus_comparison_renders_its_own_block():
    versus = {"best_single": "single:strong", "mean_difference": {"value": -0.004, "ci95": [-0.02, 0.012]},
              "worst_difference": {"value": -0.03, "ci95": [-0.06, 0.0]}, "worst_budget": 0.002,
              "base_qnc": {"value": 0.93, "ci95": [0.85, 1.01]}, "other_qnc": {"value": None, "ci95": None},
              "qnc_difference": {"value": None, "ci95": None}}
    block = render_blocks(versus)["versus"].splitlines()
    assert block[2] == "| the second hull less the first, mean over nine budgets up to strong's cost, points | -0.4 [-2.0, +1.2] |"
    assert block[4:6] == ["| QNC of the first against strong | 0.93× [0.85, 1.01] |",
                          "| QNC of the second against strong | not reached |"]


def test_a_judge_bench_report_renders_its_own_block():
    report = {"rows": [{"method": "judge", "accuracy": 0.686, "ci95": [0.61, 0.753]},
                       {"method": "plurality", "accuracy": 0.704, "ci95": [0.629, 0.77]}],
              "auc": 0.9307, "ece": 0.0509, "n": 159, "answers_graded": 791, "models": ["a", "b"],
              "judge_minus_plurality": {"points": -1.89, "ci95": [-5.03, 1.26]}}
    assert render_blocks(report)["judge"].splitlines() == [
        "| method | accuracy [95 % CI] |", "| --- | --- |",
        "| the judge's pick | 68.6 [61.0, 75.3] % |",
        "| plurality | 70.4 [62.9, 77.0] % |",
        "| the judge less the plurality, points | -1.9 [-5.0, +1.3] |",
        "| the judge's AUC / expected calibration error over 791 answers | 0.931 / 0.051 |",
        "| questions; models | 159; a, b |"]


def test_the_readme_stays_a_five_minute_read():
    """A newcomer's front door: at most 400 lines (figures and studies belong in docs/)."""
    readme = Path(__file__).resolve().parents[2] / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 400
