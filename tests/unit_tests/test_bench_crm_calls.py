"""`reso bench crm-calls` at a small size: both paths score the same slates alike (values, not timings)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reso.evals.cli import app


def test_bench_crm_calls_prints_both_paths_and_their_agreement() -> None:
    result = CliRunner().invoke(app, ["bench", "crm-calls", "--questions", "6", "--calls", "6", "--rounds", "2",
                                      "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["calls"] == 6 and report["rounds"] == 2 and report["slate"] == 3
    assert report["trees"] == {"answer": 300, "group": 200}  # the size reso demo trains
    # Six MATH questions' recorded answers, of up to 40 models each.
    assert 6 * 30 <= report["answers_trained_on"] <= 6 * 40
    assert report["max_abs_difference"] <= 1e-9
    assert report["speedup"] == pytest.approx(report["sklearn_ms_per_call"] / report["flat_ms_per_call"], rel=0.01)
