"""`reso bench faults` at tiny sizes through the real CLI: nothing lost, nothing escapes, and the
retries account for the transport faults injected."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from reso.agents.adapters.faults import FaultConfig
from reso.agents.defaults import default_pool_path
from reso.agents.pool import load_pool
from reso.evals.bench.faults import faulty_pool
from reso.evals.cli import app

TRANSPORT = ("timeout", "rate_limit", "server_error")


def _last_json(output: str) -> dict:
    return json.loads(next(line for line in reversed(output.strip().splitlines()) if line.startswith("{")))


def test_bench_faults_loses_nothing_and_counts_its_retries(tmp_path) -> None:
    result = CliRunner().invoke(app, ["bench", "faults", "--questions", "6", "--rates", "0,0.5", "--seed", "1",
                                      "--concurrency", "1", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = _last_json(result.output)
    clean, faulty = report["rows"]
    assert [clean["fault_rate"], faulty["fault_rate"]] == [0.0, 0.5]
    for row in report["rows"]:
        assert row["completed"] == 6 and row["lost"] == 0 and row["escaped_exceptions"] == 0
        assert 0.0 <= row["accuracy"] <= 1.0
        lines = (tmp_path / f"rate-{row['fault_rate']:g}" / "results.jsonl").read_text().splitlines()
        assert len(lines) == 6
    assert clean["injected"] == {} and clean["retry_calls"] == 0
    transport = sum(faulty["injected"].get(kind, 0) for kind in TRANSPORT)
    assert sum(faulty["injected"].values()) > 0
    # Every transport fault was either retried or outlasted the retries (a slow machine may add real timeouts).
    assert faulty["retry_calls"] + faulty["unrecovered_transport_errors"] >= transport
    assert 0.2 <= faulty["injected_share"] <= 0.8
    # A frozen DADB and one model failing every call: the breaker (threshold 5) shuts it out.
    healthy, dead = report["dead_endpoint"]["healthy"], report["dead_endpoint"]["dead"]
    assert dead["lost"] == 0 and dead["escaped_exceptions"] == 0 and dead["mode"] == "test"
    assert dead["breaker_trips"] >= 1
    assert dead["calls_to_first_llm_model"] <= 6 < healthy["calls_to_first_llm_model"]


def test_bench_faults_refuses_more_questions_than_the_dataset_has_and_bad_rates() -> None:
    runner = CliRunner()
    too_many = runner.invoke(app, ["bench", "faults", "--questions", "100000"])
    assert too_many.exit_code == 2 and "300 items" in too_many.output
    assert runner.invoke(app, ["bench", "faults", "--rates", "0,1.5"]).exit_code == 2
    assert runner.invoke(app, ["bench", "faults", "--rates", "x"]).exit_code == 2


def test_only_llm_agents_get_faults() -> None:
    pool = faulty_pool(load_pool(default_pool_path()), FaultConfig(rate=0.1))
    assert {agent.kind: agent.model.faults is not None for agent in pool} == {"llm": True, "tool": False}
