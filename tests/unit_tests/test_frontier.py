"""The frontier of finished runs (`reso.evals.reports.frontier`, `reso frontier`): hulls read off run folders,
the figures at their estimates, and their delta-method intervals against hand computations, with and without
source questions shared between items."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.datasets import Problem
from reso.evals.reports.compare import CompareError, load_run
from reso.evals.reports.frontier import Frontier, frontier, frontier_of_folders, knob_runs
from reso.evals.reports.hull import budgets_below
from reso.evals.reports.hull_versus import versus
from tests.run_fixtures import pattern_run

# Ten items. Single models: cheap (cost 1 an item, 3 right) and best (cost 10, 7 right); ReSo at cost 2 (5
# right) and 8 (8 right); the oracle (cost 30, 9 right).
PATTERNS = {
    "single-cheap": ("single:cheap", 1.0, "1110000000"),
    "single-best": ("single:best", 10.0, "1111111000"),
    "reso-low": ("reso", 2.0, "1111100000"),
    "reso-high": ("reso", 8.0, "1111111100"),
    "oracle": ("oracle", 30.0, "1111111110"),
}


def _runs(tmp_path: Path, names: list[str] | None = None) -> list[Path]:
    folders = []
    for name in names or list(PATTERNS):
        method, cost, pattern = PATTERNS[name]
        folders.append(pattern_run(tmp_path / f"test-{name}", pattern, cost, method=method,
                                   answer_value_usd=cost))  # ReSo's two runs differ in a setting, as a sweep's do
    return folders


def _weights(budget: float) -> dict[str, float]:
    """How the gain at `budget` depends on each run's accuracy: ReSo's hull between its two runs, less the
    single models' between theirs."""
    weights = {"single-cheap": -(1 - (budget - 1) / 9), "single-best": -(budget - 1) / 9}
    if budget >= 2:
        share = min((budget - 2) / 6, 1.0)
        weights |= {"reso-low": 1 - share, "reso-high": share}
    return weights


def test_the_frontier_of_run_folders_matches_the_hand_computed_hulls_and_figures(tmp_path: Path):
    found = frontier_of_folders(_runs(tmp_path))
    assert found.items == 10 and found.best_single == "single:best" and found.best_single_cost_usd == 10.0
    assert found.reso_hull == [(2.0, 0.5), (8.0, 0.8)] and found.single_hull == [(1.0, 0.3), (10.0, 0.7)]
    assert found.budgets == pytest.approx(budgets_below(10.0))
    accuracy = {name: pattern.count("1") / 10 for name, (_, _, pattern) in PATTERNS.items()}
    gains = [sum(w * accuracy[name] for name, w in _weights(b).items()) for b in found.budgets]
    assert found.mean_gain.value == pytest.approx(float(np.mean(gains)))
    assert found.worst_gap.value == pytest.approx(min(gains)) and found.worst_budget == pytest.approx(10 ** 0.25)
    # 70 % reached on ReSo's segment from (2, 50 %) to (8, 80 %): at 6, 0.6 of the best model's cost.
    assert found.qnc.value == pytest.approx(0.6)
    # At $10 ReSo has 80 %: half the way from the best model's 70 % to the oracle's 90 %.
    assert found.gap_closed.value == pytest.approx(0.5) and found.oracle == "oracle (uses labels)"
    assert [p.in_router_hull for p in found.points] == [False, False, True, True, False]


def _mean_gain_residuals(budgets: list[float]) -> np.ndarray:
    """Each item's term of the mean gain's error: the gradient (each run's weight averaged over the budgets)
    times the item's deviation from each run's accuracy."""
    right = {name: np.array([float(c) for c in pattern]) for name, (_, _, pattern) in PATTERNS.items()}
    mean_weights: dict[str, float] = {}
    for budget in budgets:
        for name, w in _weights(budget).items():
            mean_weights[name] = mean_weights.get(name, 0.0) + w / len(budgets)
    return sum((w * (right[name] - right[name].mean()) for name, w in mean_weights.items()), np.zeros(10))


def test_the_intervals_are_the_delta_method_with_independent_items(tmp_path: Path):
    found = frontier_of_folders(_runs(tmp_path))
    assert found.interval_method.startswith("delta method, items taken as independent")
    residual = _mean_gain_residuals(found.budgets)
    half = 1.959964 * float(np.sqrt(residual @ residual) / 10)
    assert found.mean_gain.ci95 == pytest.approx([found.mean_gain.value - half, found.mean_gain.value + half],
                                                  abs=1e-5)
    # The point's own accuracy interval comes from the same variance.
    cheap = next(p for p in found.points if p.label == "single:cheap")
    right = np.array([float(c) for c in PATTERNS["single-cheap"][2]])
    spread = 1.959964 * float(np.sqrt(((right - 0.3) ** 2).sum()) / 10)
    assert cheap.accuracy_ci95 == pytest.approx([0.3 - spread, 0.3 + spread], abs=1e-5)


def test_items_that_share_a_source_question_get_the_cluster_robust_variance(tmp_path: Path):
    runs = [load_run(folder) for folder in _runs(tmp_path)]
    # Items q0-q4 all use question "s"; q5-q9 use their own.
    problems = {f"q{i}": Problem(id=f"q{i}", question="?", answer="42",
                                 meta={"step_question_ids": {"a": "s" if i < 5 else f"own{i}", "b": f"b{i}"}})
                for i in range(10)}
    clustered = frontier(runs, problems=problems)
    assert clustered.interval_method.startswith("delta method, cluster-robust")
    independent = frontier(runs)
    right = np.array([float(c) for c in PATTERNS["single-best"][2]])

    def half_width(e: np.ndarray) -> float:
        # [Σ_q S_q² − Σ_i (k_i − 1) e_i²] / n²: question s sums q0-q4, q5-q9 have their own; every item's
        # b-question is its own too, and the k_i − 1 = 1 extra copy of e_i² it adds is taken away.
        return 1.959964 * float(np.sqrt(e[:5].sum() ** 2 + (e[5:] ** 2).sum())) / 10

    best = next(p for p in clustered.points if p.label == "single:best")
    half = half_width(right - 0.7)
    assert best.accuracy_ci95 == pytest.approx([0.7 - half, min(1.0, 0.7 + half)], abs=1e-5)
    assert clustered.mean_gain.value == pytest.approx(independent.mean_gain.value)
    gain, spread = clustered.mean_gain.value, half_width(_mean_gain_residuals(clustered.budgets))
    assert clustered.mean_gain.ci95 == pytest.approx([gain - spread, gain + spread], abs=1e-5)
    assert clustered.mean_gain.ci95 != pytest.approx(independent.mean_gain.ci95, abs=1e-3)


def test_a_router_subset_makes_the_hull_and_the_others_are_points(tmp_path: Path):
    runs = [load_run(folder) for folder in _runs(tmp_path)]
    found = frontier(runs, router=[False, False, False, True, False])
    assert found.reso_hull == [(8.0, 0.8)]
    assert found.reso_at[0] == 0.0 and found.qnc.value == pytest.approx(0.8)


def test_runs_that_make_no_frontier_are_refused_in_one_line(tmp_path: Path):
    with pytest.raises(CompareError, match="no ReSo run"):
        frontier_of_folders(_runs(tmp_path, ["single-cheap", "single-best"]))
    with pytest.raises(CompareError, match="no single-model run that costs something"):
        frontier_of_folders(_runs(tmp_path, ["reso-low", "reso-high"]))


def test_reso_frontier_prints_the_figures_and_writes_json_and_the_picture(tmp_path: Path):
    _runs(tmp_path / "bench")
    runner = CliRunner()
    out = tmp_path / "frontier"
    printed = runner.invoke(app, ["frontier", str(tmp_path / "bench"), "--out", str(out)])
    assert printed.exit_code == 0, printed.output
    assert "mean gain over the single models' hull" in printed.output and "QNC" in printed.output
    assert (out / "frontier.json").is_file() and (out / "frontier.png").stat().st_size > 10_000
    result = runner.invoke(app, ["frontier", *(str(p) for p in sorted((tmp_path / "bench").iterdir())), "--json"])
    data = json.loads(result.output.strip().splitlines()[-1])
    assert {point["label"] for point in data["points"]} >= {"single:cheap", "single:best"}
    assert Frontier.from_json(data).qnc.value == pytest.approx(0.6)
    missing = runner.invoke(app, ["frontier", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and missing.output.startswith("error: ") and len(missing.output.splitlines()) == 1


def test_the_hull_is_made_of_the_reso_runs_along_the_budget_knob(tmp_path: Path):
    folders = _runs(tmp_path)
    # A ReSo run with another fine stage: the best point of all, but another method, so only a point.
    other = pattern_run(tmp_path / "test-reso-fixed", "1111111110", 3.0, method="reso", answer_value_usd=3.0,
                        asking="fixed")
    found = frontier_of_folders([*folders, other])
    assert found.reso_hull == [(2.0, 0.5), (8.0, 0.8)]
    assert [p.in_router_hull for p in found.points] == [False, False, True, True, False, False]
    assert knob_runs([{"method": "reso", "settings": {"asking": "fixed", "answer_value_usd": 1.0}},
                      {"method": "single:a", "settings": {}},
                      {"method": "reso", "settings": {"asking": "priced", "answer_value_usd": 1.0}},
                      {"method": "reso", "settings": {"asking": "priced", "answer_value_usd": 2.0,
                                                      "db": "elsewhere"}}]) == [False, False, True, True]


def test_a_second_routers_hull_is_read_against_the_first_at_the_first_ones_budgets(tmp_path: Path):
    base = _runs(tmp_path / "roster")
    # The larger pool's ReSo: 40 % at 1.5 and 90 % at 12 an item.
    other = [pattern_run(tmp_path / "all" / "test-reso-a", "1111000000", 1.5, method="reso", answer_value_usd=1.0),
             pattern_run(tmp_path / "all" / "test-reso-b", "1111111110", 12.0, method="reso", answer_value_usd=9.0)]
    found = versus([load_run(f) for f in base], [load_run(f) for f in other])
    mine = [0.0 if b < 2 else 0.5 + 0.3 * min((b - 2) / 6, 1.0) for b in found.budgets]
    theirs = [0.0 if b < 1.5 else 0.4 + 0.5 * (b - 1.5) / 10.5 for b in found.budgets]
    assert found.base_at == pytest.approx(mine) and found.other_at == pytest.approx(theirs)
    assert found.mean_difference.value == pytest.approx(float(np.mean(np.subtract(theirs, mine))))
    assert found.worst_difference.value == pytest.approx(min(np.subtract(theirs, mine)))
    # The first reaches the best single model's 70 % at 6 (0.6 of its cost), the second at 1.5 + 10.5 × 0.3 / 0.5.
    assert found.base_qnc.value == pytest.approx(0.6)
    assert found.other_qnc.value == pytest.approx((1.5 + 10.5 * 0.6) / 10)
    assert found.qnc_difference.value == pytest.approx(found.other_qnc.value - 0.6)
    assert found.mean_difference.ci95 is not None
    printed = CliRunner().invoke(app, ["frontier", str(tmp_path / "roster"), "--versus", str(tmp_path / "all")])
    assert printed.exit_code == 0 and "the second router's hull less the first's" in printed.output
