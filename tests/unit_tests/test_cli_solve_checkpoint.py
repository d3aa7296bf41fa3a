"""`reso solve --checkpoint` on a SQLite store: a new thread's id is said before the run starts and returned in
the JSON; `$RESO_CHECKPOINT_URL` is the default store; a thread answered before gives its saved result when
named again, with or without its question, and nothing runs. (A run killed mid-question and resumed is
tests/integration_tests/test_solve_checkpoint.py, on PostgreSQL.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.evals.cli import app, progress
from tests.unit_tests.test_cli_solve import JANET


def _invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), env={"RESO_CHECKPOINT_URL": "", **(env or {})})


def _last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_a_new_thread_is_said_first_and_a_finished_one_is_not_run_again(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "runs" / "checkpoints.sqlite"
    first = _invoke("solve", JANET, "--json", env={"RESO_CHECKPOINT_URL": str(store)})
    assert first.exit_code == 0, first.output
    # The one line a new thread gets; nothing about the DADB: the default pool's shipped one has learned.
    (said,) = first.stderr.strip().splitlines()
    note = re.fullmatch(r"note: thread ([0-9a-f]{32}): if this run stops, rerun with --thread \1 to resume it", said)
    assert note is not None, first.stderr
    answered = _last_json(first.stdout)
    assert answered["answer"] == "18" and answered["thread_id"] == note.group(1)
    assert store.is_file()

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("a finished thread was run again")

    monkeypatch.setattr(progress, "run_with_progress", no_run)
    for question in ((), (JANET,)):
        again = _invoke("solve", *question, "--checkpoint", str(store), "--thread", note.group(1), "--json")
        assert again.exit_code == 0, again.output
        assert again.stderr == ""  # a thread named is not announced, and nothing runs on the DADB
        saved = _last_json(again.stdout)
        assert (saved["answer"], saved["question"], saved["thread_id"]) == ("18", JANET, note.group(1))
        assert saved["steps"] == answered["steps"] and saved["usage"] == answered["usage"]


def test_without_checkpoint_nothing_is_saved_and_no_thread_is_named(tmp_path: Path) -> None:
    result = _invoke("solve", JANET, "--json")
    assert result.exit_code == 0, result.output
    assert "thread_id" not in _last_json(result.stdout) and result.stderr.splitlines() == []
