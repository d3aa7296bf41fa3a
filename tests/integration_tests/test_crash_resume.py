"""Crash and resume: `reso eval --mode train` killed with SIGKILL partway, twice, then rerun into the same
folder; a checkpointed graph run killed mid-question and resumed by thread id.

Invariants: the final results file holds every item exactly once; the DADB's visits equal the candidate
calls recorded in the results file (no update lost or applied twice); a resumed graph run does not ask
again the subtasks it had finished, answers right, and learns every subtask's reward once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.defaults import two_model_pool_path

ROOT = Path(__file__).resolve().parents[2]
RESO = str(Path(sys.executable).with_name("reso"))
DATASET = "gsm8k-mas-easy-train"
ITEMS = 40

pytestmark = pytest.mark.integration


def _env() -> dict[str, str]:
    return {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def kill_while_step_c_runs(command: list[str], log: Path) -> None:
    """Start the checkpoint child `command` and SIGKILL it while step C is in flight (A and B saved)."""
    process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        while "Step C" not in _lines(log):
            if process.poll() is not None:
                pytest.fail(f"the child ended before step C: {process.stderr.read().decode()[-2000:]}")
            assert time.monotonic() < deadline, "step C never started"
            time.sleep(0.02)
        # Step C answers after 3 s: kill it in flight, well after A and B were saved.
        time.sleep(1.0)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def _eval_command(out: Path, db: Path, dataset: str = DATASET, limit: int = ITEMS) -> list[str]:
    # The hashing embedder spares each process seconds of model loading; what is tested is independent of it.
    # GSM8K-MAS is made of the two-model pool's recorded questions (its 8-shot prompts size the token budget).
    return [RESO, "eval", "--mode", "train", "--dataset", dataset, "--limit", str(limit), "--concurrency", "2",
            "--out", str(out), "--db", str(db), "--quiet", "--set", "selection.embedder=hash:256",
            "--pool", str(two_model_pool_path())]


def _kill_after_lines(command: list[str], results: Path, more: int, deadline_s: float = 120) -> int:
    """Start `command`, SIGKILL it once `results` has `more` lines more than now; the line count then."""
    before = len(_lines(results))
    process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + deadline_s
    try:
        while len(_lines(results)) < before + more:
            if process.poll() is not None:
                pytest.fail(f"the run ended before it was killed: {process.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("the run wrote no results in time")
            time.sleep(0.02)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    return len(_lines(results))


def _recorded_calls(*outs: Path) -> int:
    """Candidate calls with a learned reward (a step after a wrong parent answer is not learned)."""
    return sum(candidate["reward"] is not None for out in outs for line in _lines(out / "results.jsonl")
               for step in json.loads(line)["steps"] for candidate in step["candidates"])


def test_eval_killed_twice_resumes_with_every_item_once_and_exact_dadb_counts(tmp_path):
    out, db = tmp_path / "sweep" / "train", tmp_path / "dadb.sqlite"
    results = out / "results.jsonl"
    first = _kill_after_lines(_eval_command(out, db), results, 4)
    second = _kill_after_lines(_eval_command(out, db), results, 4)
    assert 4 <= first < second < ITEMS, "both kills landed partway"
    finished = subprocess.run(_eval_command(out, db), cwd=ROOT, env=_env(), capture_output=True, text=True,
                              timeout=180)
    assert finished.returncode == 0, finished.stderr[-2000:]
    rows = [json.loads(line) for line in _lines(results)]
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) == ITEMS
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n"] == ITEMS and summary["stopped"] is None
    dadb = DADB(db, mode="test")
    assert dadb.total_visits() == _recorded_calls(out) == sum(len(row["dadb_updates"]) for row in rows)
    assert len(dadb.applied_keys()) == ITEMS


def test_concurrent_training_runs_sharing_one_dadb_count_exactly(tmp_path):
    db = tmp_path / "shared.sqlite"
    runs = {"easy": "gsm8k-mas-easy-train", "medium": "gsm8k-mas-medium-train", "hard": "gsm8k-mas-hard-train"}
    processes = [subprocess.Popen(_eval_command(tmp_path / "sweep" / name, db, dataset, limit=12), cwd=ROOT,
                                  env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for name, dataset in runs.items()]
    for process in processes:
        _, stderr = process.communicate(timeout=240)
        assert process.returncode == 0, stderr[-2000:]
    outs = [tmp_path / "sweep" / name for name in runs]
    for out in outs:
        assert len(_lines(out / "results.jsonl")) == 12
    dadb = DADB(db, mode="test")
    assert dadb.total_visits() == _recorded_calls(*outs) > 0
    assert len(dadb.applied_keys()) == 3 * 12


def test_checkpointed_graph_run_resumes_without_asking_finished_subtasks_again(tmp_path):
    checkpoint, log = tmp_path / "checkpoints.sqlite", tmp_path / "calls.log"
    command = [sys.executable, "-m", "tests.integration_tests.checkpoint_child", str(checkpoint), str(log)]
    kill_while_step_c_runs(command, log)
    assert _lines(log) == ["Step A", "Step B", "Step C"]
    dadb = Path(f"{checkpoint}.dadb.sqlite")
    assert DADB(dadb, mode="test").total_visits() == 0, "a checkpointed training run learns when it is answered"
    resumed = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    result = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert result["answer"] == "24" and result["status"] == "done"
    assert result["steps"] == {"0": "2", "1": "3", "2": "4", "final": "24"}
    assert _lines(log) == ["Step A", "Step B", "Step C", "Step C"], "only the subtask in flight is asked again"
    # Every subtask's reward is learned once, those finished before the kill included.
    assert result["visits"] == result["candidates"] == 4
    again = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr[-2000:]
    assert DADB(dadb, mode="test").total_visits() == 4, "solving a finished thread again learns nothing more"


def test_eval_stopped_by_its_run_budget_reports_partial_results_and_resumes_with_a_higher_one(tmp_path):
    out, db = tmp_path / "sweep" / "budget", tmp_path / "dadb.sqlite"
    limited = subprocess.run([*_eval_command(out, db, limit=10), "--set", "run.budget_tokens=25000"],
                             cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert limited.returncode == 0, limited.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"].startswith("run token budget of 25000 spent")
    assert 0 < summary["n"] < 10 and summary["items_left"] == 10 - summary["n"]
    assert summary["total_tokens"] <= 25000
    assert "partial" in (out / "report.md").read_text()
    rows = [json.loads(line) for line in _lines(out / "results.jsonl")]
    assert DADB(db, mode="test").total_visits() == sum(len(row["dadb_updates"]) for row in rows)

    resumed = subprocess.run([*_eval_command(out, db, limit=10), "--set", "run.budget_tokens=1000000"],
                             cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] is None and summary["n"] == 10
    rows = [json.loads(line) for line in _lines(out / "results.jsonl")]
    assert len(rows) == len({row["id"] for row in rows}) == 10
    assert DADB(db, mode="test").total_visits() == sum(len(row["dadb_updates"]) for row in rows)
