"""`reso bench dag` at tiny sizes through the real CLI: the report's shape and the bounds any run obeys
(no timing targets: the machine's load decides those)."""

from __future__ import annotations

import json
import math
import random

from typer.testing import CliRunner

from reso.evals.bench.dag import LEVELS, draw_plan
from reso.evals.cli import app
from reso.graphs.dag import TaskDAG

# A run can only beat its critical path by clock granularity.
EPSILON = 1e-3


def _last_json(output: str) -> dict:
    line = next(line for line in reversed(output.strip().splitlines()) if line.startswith("{"))
    return json.loads(line)


def _positive_finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def test_bench_dag_reports_every_level_under_both_schedules() -> None:
    result = CliRunner().invoke(app, ["bench", "dag", "--questions", "2", "--median-ms", "5",
                                      "--overhead-questions", "3", "--json"])
    assert result.exit_code == 0, result.output
    report = _last_json(result.output)
    assert set(report["levels"]) == {"easy", "medium", "hard"}
    for level, row in report["levels"].items():
        assert row["subtasks"] == LEVELS[level] + 1
        for figures in (row, row["waves"]):
            for key in ("wall_over_critical", "speedup_vs_sequential", "ideal_speedup"):
                assert _positive_finite(figures[key]), (level, key, figures[key])
            assert figures["wall_over_critical"] >= 1 - EPSILON
            # Ideal = sequential / critical ≥ 1, and no run beats its ideal speedup.
            assert figures["ideal_speedup"] >= 1 - EPSILON
            assert figures["speedup_vs_sequential"] <= figures["ideal_speedup"] + EPSILON
    for key in ("overhead_ms_per_subtask", "overhead_cpu_ms_per_subtask", "overhead_ms_per_question"):
        assert _positive_finite(report[key]), key


def test_drawn_plans_have_the_level_size_and_a_final_step_over_every_sub_question() -> None:
    rng = random.Random(7)
    for n_sub in LEVELS.values():
        dag = TaskDAG.from_steps(draw_plan(n_sub, rng, 0), repair=False)
        assert len(dag) == n_sub + 1
        assert dag.final_id == "final"
        assert sorted(dag.parents("final")) == sorted(str(i) for i in range(n_sub))
