"""`reso bench eval` at tiny sizes through the real CLI: the report's keys, the bounds any run obeys, and
the ideal-time formula (no timing targets: the machine's load decides those)."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from reso.evals.bench.eval import PLAN_DEPTH, bench_plan, ideal_seconds
from reso.evals.cli import app
from reso.graphs.dag import TaskDAG


def _last_json(output: str) -> dict:
    line = next(line for line in reversed(output.strip().splitlines()) if line.startswith("{"))
    return json.loads(line)


def test_bench_eval_json_report() -> None:
    result = CliRunner().invoke(app, ["bench", "eval", "--questions", "6", "--concurrency", "4",
                                      "--latency-ms", "20", "--trace-memory", "--json"])
    assert result.exit_code == 0, result.output
    report = _last_json(result.output)
    for key in ("throughput_ratio", "peak_rss_mb", "items_per_s", "ideal_s", "wall_s", "tracemalloc_peak_mb"):
        assert math.isfinite(report[key]) and report[key] > 0, key
    # Two slots' worth of questions: ideal = ceil(6 / 4) × 3 steps × 20 ms.
    assert report["ideal_s"] == pytest.approx(2 * PLAN_DEPTH * 0.020)
    # The runner can beat the ideal only by clock granularity.
    assert 0 < report["throughput_ratio"] <= 1.05
    assert report["accuracy"] == 1.0 and report["failed_items"] == 0
    # A latency-faking agent answered every step, so the critical path really is the plan's depth.
    assert report["calculator_only_steps"] == 0
    assert report["peak_rss_mb"] >= report["peak_rss_before_batch_mb"]


def test_bench_eval_table_and_bad_options() -> None:
    result = CliRunner().invoke(app, ["bench", "eval", "--questions", "2", "--concurrency", "2",
                                      "--latency-ms", "5"])
    assert result.exit_code == 0, result.output
    assert "throughput" in result.output and "ratio" in result.output
    bad = CliRunner().invoke(app, ["bench", "eval", "--k", "1"])
    assert bad.exit_code == 2 and "--k" in bad.output


def test_ideal_time_counts_whole_slots() -> None:
    assert ideal_seconds(200, 64, 0.3) == pytest.approx(4 * 0.3)
    assert ideal_seconds(64, 64, 0.3) == pytest.approx(0.3)
    assert ideal_seconds(1, 64, 0.3) == pytest.approx(0.3)
    assert TaskDAG.from_steps(bench_plan(0)).critical_path({"0": 1, "1": 1, "2": 1, "final": 1}) == PLAN_DEPTH
