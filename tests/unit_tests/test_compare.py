"""Intervals and paired comparisons: Wilson values against known numbers, the paired bootstrap's exact
degenerate cases and seeded reproducibility, and `reso compare` on run folders, its errors included."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.reports.compare import CompareError, compare_runs, load_run
from reso.evals.reports.stats import paired_bootstrap, wilson_interval
from tests.run_fixtures import pattern_run, result_row, write_run


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


@pytest.mark.parametrize(("correct", "n", "low", "high"), [
    (5, 10, 0.2366, 0.7634),   # p = 1/2: centre 0.5, half-width z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n)
    (0, 10, 0.0, 0.2775),      # upper bound z²/(n + z²)
    (10, 10, 0.7225, 1.0),
    (7, 20, 0.1812, 0.5671),
    (81, 263, 0.2553, 0.3662),
])
def test_wilson_interval_matches_known_values(correct, n, low, high):
    lo, hi = wilson_interval(correct, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_wilson_interval_of_no_items_is_none():
    assert wilson_interval(0, 0) is None


def test_identical_runs_differ_by_exactly_zero():
    rng = np.random.default_rng(3)
    right = rng.random(50) < 0.6
    cost = rng.random(50)
    pairs = paired_bootstrap(np.array([right, right]), np.array([cost, cost]), resamples=500, seed=1)
    assert pairs[1].accuracy_diff == 0.0 and pairs[1].accuracy_diff_ci95 == [0.0, 0.0]
    assert pairs[1].cost_ratio == 1.0 and pairs[1].cost_ratio_ci95 == [1.0, 1.0]


def test_always_right_against_always_wrong_differs_by_exactly_one():
    right, wrong = np.ones(30), np.zeros(30)
    cost = np.full(30, 0.5)
    pairs = paired_bootstrap(np.array([wrong, right]), np.array([cost, 2 * cost]), reference=0, resamples=300)
    assert pairs[1].accuracy_diff == 1.0 and pairs[1].accuracy_diff_ci95 == [1.0, 1.0]
    assert pairs[1].cost_ratio == 2.0 and pairs[1].cost_ratio_ci95 == pytest.approx([2.0, 2.0])
    flipped = paired_bootstrap(np.array([wrong, right]), np.array([cost, cost]), reference=1, resamples=300)
    assert flipped[0].accuracy_diff_ci95 == [-1.0, -1.0]


def test_bootstrap_is_reproducible_by_seed_and_moves_with_it():
    rng = np.random.default_rng(0)
    correct = rng.random((3, 40)) < 0.5
    cost = rng.random((3, 40))
    first = paired_bootstrap(correct, cost, resamples=400, seed=7)
    assert first == paired_bootstrap(correct, cost, resamples=400, seed=7)
    other = paired_bootstrap(correct, cost, resamples=400, seed=8)
    assert [p.accuracy_diff_ci95 for p in first] != [p.accuracy_diff_ci95 for p in other]
    low, high = first[1].accuracy_diff_ci95
    assert low < first[1].accuracy_diff < high


def test_bootstrap_interval_narrows_with_pairing():
    """Two runs that agree on all but two of 100 items: the paired interval is a few points wide, far
    narrower than the unpaired Wilson intervals of either accuracy."""
    base = np.arange(100) % 2 == 0
    other = base.copy()
    other[[1, 3]] = True
    pairs = paired_bootstrap(np.array([base, other]), np.ones((2, 100)), resamples=1000)
    low, high = pairs[1].accuracy_diff_ci95
    assert 0.0 <= low and high <= 0.06 and pairs[1].accuracy_diff == pytest.approx(0.02)


def test_free_reference_has_no_cost_ratio():
    pairs = paired_bootstrap(np.ones((2, 5)), np.array([np.zeros(5), np.ones(5)]), resamples=50)
    assert pairs[1].cost_ratio is None and pairs[1].cost_ratio_ci95 is None


def test_bootstrap_refuses_bad_shapes():
    with pytest.raises(ValueError, match="one shape"):
        paired_bootstrap(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="resamples"):
        paired_bootstrap(np.ones((2, 3)), np.ones((2, 3)), resamples=0)


def test_compare_matches_items_by_id_and_counts_the_shared_ones(tmp_path):
    a = write_run(tmp_path / "a", [result_row(f"q{i}", True, 0.02) for i in range(6)], method="single:x")
    b = write_run(tmp_path / "b", [result_row(f"q{i}", i % 2 == 0, 0.01) for i in reversed(range(2, 10))])
    comparison = compare_runs([load_run(a), load_run(b)], resamples=200)
    assert comparison.shared_items == 4  # q2..q5
    first, second = comparison.runs
    assert (first.n, first.items_in_run, second.items_in_run) == (4, 6, 8)
    assert second.accuracy == 0.5 and first.accuracy == 1.0
    assert second.vs_reference.accuracy_diff == -0.5
    assert second.vs_reference.cost_ratio == pytest.approx(0.5)
    assert second.accuracy_ci95 == pytest.approx(wilson_interval(2, 4))


def test_compare_does_not_depend_on_the_order_items_finished_in(tmp_path):
    # A concurrent run writes its rows in the order items finish: the same items in another order must
    # give the same seeded intervals.
    rng = np.random.default_rng(0)
    flags = [(bool(a), bool(b)) for a, b in rng.random((40, 2)) < (0.8, 0.6)]
    rows = {side: [result_row(f"q{i:02d}", pair[side], 0.01 * (1 + side)) for i, pair in enumerate(flags)]
            for side in (0, 1)}
    order = rng.permutation(40)
    shuffled = {side: [rows[side][i] for i in order] for side in (0, 1)}
    first = compare_runs([load_run(write_run(tmp_path / f"a{side}", rows[side])) for side in (0, 1)],
                         resamples=300)
    again = compare_runs([load_run(write_run(tmp_path / f"b{side}", shuffled[side])) for side in (0, 1)],
                         resamples=300)
    assert first.runs[1].vs_reference == again.runs[1].vs_reference
    assert first.runs[1].vs_reference.accuracy_diff_ci95[0] < first.runs[1].vs_reference.accuracy_diff_ci95[1]


def test_compare_refuses_runs_without_shared_items(tmp_path):
    a = pattern_run(tmp_path / "a", "11")
    b = write_run(tmp_path / "b", [result_row("other", True)])
    with pytest.raises(CompareError, match="no item id is shared"):
        compare_runs([load_run(a), load_run(b)])


def test_cli_prints_one_json_object_last_and_writes_its_files(tmp_path):
    pattern_run(tmp_path / "single", "1100110011", method="single:model-a")
    pattern_run(tmp_path / "reso", "1110111011", cost=0.02)
    pattern_run(tmp_path / "oracle", "1111111111", method="oracle")
    result = invoke("compare", str(tmp_path / "single"), str(tmp_path / "reso"), str(tmp_path / "oracle"),
                    "--json", "--out", str(tmp_path / "cmp"), "--resamples", "300", "--seed", "4")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["shared_items"] == 10 and report["resamples"] == 300 and report["seed"] == 4
    runs = {run["folder"].rsplit("/", 1)[-1]: run for run in report["runs"]}
    assert runs["reso"]["accuracy"] == 0.8 and runs["reso"]["vs_reference"]["accuracy_diff"] == pytest.approx(0.2)
    assert runs["reso"]["vs_reference"]["cost_ratio"] == pytest.approx(2.0)
    assert runs["oracle"]["label"] == "oracle (uses labels)"
    assert (tmp_path / "cmp" / "accuracy_vs_cost.png").stat().st_size > 0
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text())["shared_items"] == 10


def test_cli_reference_option_and_table(tmp_path):
    pattern_run(tmp_path / "a", "1010", method="single:model-a")
    pattern_run(tmp_path / "b", "1111")
    result = invoke("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--reference", str(tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert "4 items shared by all 2 runs" in result.stdout and "against b" in result.stdout
    assert "-50.0" in result.stdout  # a against b


@pytest.mark.parametrize(("setup", "message"), [
    ("no-shared", "no item id is shared by all of"),
    ("no-summary", "no summary.json"),
    ("no-results", "no results.jsonl"),
    ("bad-line", "results.jsonl:1: not a JSON object"),
    ("missing-field", "results.jsonl:1: result row lacks field 'usage'"),
    ("not-a-folder", "not a folder"),
    ("latin1", "results.jsonl: not valid UTF-8 (byte 0xe9 at offset 2)"),
])
def test_cli_errors_are_one_line_with_exit_code_2(tmp_path, setup, message):
    good = pattern_run(tmp_path / "good", "10")
    other = tmp_path / "other"
    if setup == "no-shared":
        write_run(other, [result_row("z", True)])
    elif setup == "no-summary":
        pattern_run(other, "10")
        (other / "summary.json").unlink()
    elif setup == "no-results":
        pattern_run(other, "10")
        (other / "results.jsonl").unlink()
    elif setup == "bad-line":
        pattern_run(other, "10")
        lines = (other / "results.jsonl").read_text().splitlines()
        (other / "results.jsonl").write_text("{broken\n" + lines[1] + "\n")
    elif setup == "missing-field":
        pattern_run(other, "10")
        (other / "results.jsonl").write_text('{"id": "q0", "correct": true}\n')
    elif setup == "latin1":
        pattern_run(other, "10")
        (other / "results.jsonl").write_bytes(b'{"\xe9": 1}\n')
    result = invoke("compare", str(good), str(other))
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert str(other) in lines[0]


def test_cli_refuses_zero_resamples(tmp_path):
    result = invoke("compare", str(pattern_run(tmp_path / "a", "1")), "--resamples", "0")
    assert result.exit_code == 2 and "--resamples must be >= 1" in result.stderr


def test_help_lists_compare():
    result = invoke("--help")
    assert result.exit_code == 0 and " compare " in result.stdout
