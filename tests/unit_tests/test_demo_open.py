"""`reso demo --world open`: the main job on the open-weight roster, each benchmark on the models that record
its questions (the pool it ran on written to its folder), with vote:3 and vote:5 among the baselines."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from typer.testing import CliRunner

from reso.agents.pool import load_pool
from reso.evals.cli import app
from reso.evals.jobs import demo
from reso.evals.jobs.comparison import comparison_rows
from reso.evals.jobs.config import DemoConfig
from reso.evals.jobs.demo import run_demo
from reso.evals.jobs.events import TESTING_RESO, TRAINING, LogProgress, PlannedRun

MATH_ONLY = {"Phi-3-mini-4k-instruct", "Qwen2.5-32B-Instruct", "Qwen2.5-3B-Instruct", "Qwen2.5-72B-Instruct",
             "Qwen2.5-7B-Instruct", "gemma-2-27b-it"}
GSM8K_ONLY = {"DeepSeek-Coder-V2-0724", "Llama-3.1-405B-Instruct-Turbo", "Mistral-Nemo-Instruct-2407",
              "Mixtral-8x7B-Instruct-v0.1", "gemma-2-27b-it@together"}


class Heard(LogProgress):
    """The notes, and the plans and stages in the order they came."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.order: list[tuple[str, str]] = []
        super().__init__(self.notes.append)

    def plan(self, benchmark: str, runs: Sequence[PlannedRun]) -> None:
        self.order.append(("plan", benchmark))

    def start_phase(self, benchmark: str, stage: str) -> None:
        self.order.append((stage, benchmark))


@pytest.fixture(scope="module")
def heard() -> Heard:
    return Heard()


@pytest.fixture(scope="module")
def open_demo(tmp_path_factory, heard):
    out = tmp_path_factory.mktemp("open")
    config = DemoConfig(out=out, world="open", train_limit=3, test_limit=2, concurrency=4, crm="vote",
                        reso_variants={})
    return out, run_demo(config, progress=heard), heard.notes


def test_every_benchmark_is_planned_before_the_first_starts(open_demo, heard):
    # So the whole job's ETA counts the second benchmark's runs from the start.
    math, gsm8k = "MATH-MAS-L5 (open-weight models)", "GSM8K-MAS (linked, open-weight models)"
    assert heard.order[:3] == [("plan", math), ("plan", gsm8k), (TRAINING, math)]
    assert heard.order.index((TRAINING, gsm8k)) > heard.order.index((TESTING_RESO, math))


def _singles(summaries) -> set[str]:
    return {s["method"].removeprefix("single:") for s in summaries if s["method"].startswith("single:")}


def test_each_benchmark_runs_on_the_models_that_record_it(open_demo):
    out, by_benchmark, notes = open_demo
    for stem, absent, count in (("math-l5-mas", GSM8K_ONLY, 22), ("gsm8k-l-mas", MATH_ONLY, 21)):
        pool = load_pool(out / stem / "pool.yaml")
        models = {agent.model.model_name for agent in pool if agent.kind == "llm"}
        assert len(models) == count and not models & absent
        # Every model of the roster is a single-model baseline, and no other is.
        agents = {agent.id for agent in pool if agent.kind == "llm" and agent.role == "Algebra"}
        assert _singles(by_benchmark[stem]) == agents
        summary = json.loads((out / stem / "test-reso" / "summary.json").read_text())
        assert summary["settings"]["pool"] == "../pool.yaml"  # relative to the run folder
    assert sum("left out" in note and ", ".join(sorted(GSM8K_ONLY, key=str.lower)) in note for note in notes) == 1


def test_the_open_tables_hold_vote_3_vote_5_and_the_other_baselines(open_demo):
    out, by_benchmark, _ = open_demo
    for stem, summaries in by_benchmark.items():
        methods = [s["method"] for s in summaries]
        assert methods[0] == "reso" and {"vote:3", "vote:5", "random", "oracle"} <= set(methods)
        assert sum(m.startswith("cascade:") for m in methods) == 1
        assert all(s["n"] == 2 for s in summaries)
        labels = [row["method"] for row in comparison_rows(out / stem, summaries)]
        assert labels.index("vote:3") + 1 == labels.index("vote:5")
        assert labels[0] == "reso" and labels[-1] == "oracle (uses labels)"


def test_reso_demo_accepts_the_open_world_and_names_it_in_its_json(tmp_path, monkeypatch):
    seen: list[DemoConfig] = []
    monkeypatch.setattr(demo, "run_demo", lambda config, **_: seen.append(config) or {})
    result = CliRunner().invoke(app, ["demo", "--world", "open", "--swap-split",
                                      "--set", "demo.min_recorded=0.5", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["world"] == "open"
    assert [(c.world, c.swap_split, c.min_recorded) for c in seen] == [("open", True, 0.5)]
    refused = CliRunner().invoke(app, ["demo", "--world", "closed", "--out", str(tmp_path)])
    assert refused.exit_code == 2 and "open" in refused.output
