"""Ctrl-C (SIGINT to the process group, as a terminal sends it) during `reso eval` and `reso demo`: at most
three lines after it (what was saved, the command that resumes), exit code 130, no traceback and no asyncio
noise from the cancelled tasks or the background CRM fit's worker; the same command then resumes, keeping
what was saved and answering each question once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reso.agents.dadb.sqlite import DADB

ROOT = Path(__file__).resolve().parents[2]
RESO = str(Path(sys.executable).with_name("reso"))
NOISE = ("Traceback", "Exception in callback", "Future exception was never retrieved", "Task was destroyed",
         "KeyboardInterrupt", "CancelledError", "Aborted")

pytestmark = pytest.mark.integration


def _env() -> dict[str, str]:
    return {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def interrupt_when(command: list[str], ready: Callable[[], bool], deadline_s: float = 180) -> tuple[int, list[str]]:
    """Run `command` in its own process group, send the group SIGINT once `ready()`, and return its exit code
    and the lines (standard output and error together) it printed after the signal."""
    process = subprocess.Popen(command, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(process.stdout or ()), daemon=True)
    reader.start()
    deadline = time.monotonic() + deadline_s
    try:
        while not ready():
            if process.poll() is not None:
                pytest.fail(f"the command ended before the interrupt: {''.join(printed)[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("the command saved nothing in time")
            time.sleep(0.05)
        before = len(printed)
        os.killpg(process.pid, signal.SIGINT)
        code = process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    reader.join(timeout=10)
    return code, [line.rstrip("\n") for line in printed[before:]]


def assert_said_what_was_saved(code: int, after: list[str], out: Path, command: str) -> None:
    assert code == 130, after
    assert len(after) <= 3, after
    assert not any(noise in line for line in after for noise in NOISE), after
    assert after[-2].startswith("interrupted: ") and str(out) in after[-2], after
    assert after[-1].startswith(f"to resume, run: reso {command} "), after


def test_ctrl_c_in_eval_says_what_was_saved_and_the_rerun_resumes(tmp_path: Path) -> None:
    out, db = tmp_path / "run", tmp_path / "dadb.sqlite"
    results = out / "results.jsonl"
    command = [RESO, "eval", "--mode", "train", "--dataset", "gsm8k-mas-easy-train", "--limit", "120",
               "--concurrency", "2", "--out", str(out), "--db", str(db), "--quiet",
               "--set", "selection.embedder=hash:256"]
    code, after = interrupt_when(command, lambda: len(_lines(results)) >= 2)
    assert_said_what_was_saved(code, after, out, "eval")
    saved = _lines(results)
    assert 2 <= len(saved) < 120 and f"{len(saved)} answered question" in after[-2]

    rerun = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    lines = _lines(results)
    assert lines[:len(saved)] == saved, "what was saved is kept, not answered again"
    rows = [json.loads(line) for line in lines]
    assert len(rows) == len({row["id"] for row in rows}) == 120
    # Learned once per question, the interrupted ones included.
    assert DADB(db, mode="test").total_visits() == sum(len(row["dadb_updates"]) for row in rows)


def test_ctrl_c_in_demo_says_what_was_saved_and_the_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    training = out / "math-l5-mas" / "train-reso" / "results.jsonl"
    # The general CRM is fitted in a second process meanwhile: it must stay quiet too.
    command = [RESO, "demo", "--out", str(out), "--set", "demo.train_limit=40", "--set", "demo.test_limit=10"]
    code, after = interrupt_when(command, lambda: len(_lines(training)) >= 3)
    assert_said_what_was_saved(code, after, out, "demo")
    saved = _lines(training)

    code, after = interrupt_when(command, lambda: len(_lines(training)) >= 40)
    assert_said_what_was_saved(code, after, out, "demo")
    lines = _lines(training)
    assert lines[:len(saved)] == saved, "what was saved is kept, not answered again"
    assert len({json.loads(line)["id"] for line in lines}) == len(lines) == 40
