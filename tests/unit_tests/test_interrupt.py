"""Ctrl-C in any `reso` command (`reso.evals.cli.interrupt`): what was saved and the command that resumes, on
at most two lines, exit code 130, no traceback. The real interrupt of `reso eval` and `reso demo`, with the
rerun resuming, is tests/integration_tests/test_interrupt_resume.py."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from reso.evals.cli import interrupt
from reso.evals.cli.interrupt import EXIT_INTERRUPTED, ResoGroup, answers_saved, rerun_command, resumable


@pytest.fixture(autouse=True)
def sigint_handler() -> Iterator[None]:
    """The handler sets SIGINT to its default once it has spoken (for the process's last moments): put
    pytest's back."""
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)
    interrupt.forget()


def _app(folder: Path | None) -> typer.Typer:
    app = typer.Typer(cls=ResoGroup)

    @app.command("run")
    def run() -> None:
        if folder is not None:
            resumable(lambda: answers_saved(folder))
            (folder / "results.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n')
        raise KeyboardInterrupt

    @app.command("other")
    def other() -> None:
        """A second command, so that the app is a group with sub-commands, as `reso` is."""

    return app


def test_an_interrupted_command_says_what_it_saved_and_how_to_resume_and_exits_130(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["/venv/bin/reso", "run", "--out", str(tmp_path)])
    result = CliRunner().invoke(_app(tmp_path), ["run"])
    assert result.exit_code == EXIT_INTERRUPTED
    assert "Traceback" not in result.output and result.stdout == ""
    assert result.stderr.splitlines() == [f"interrupted: 2 answered questions saved in {tmp_path}",
                                          f"to resume, run: reso run --out {tmp_path}"]
    # Once it has spoken, a second Ctrl-C ends the process at once (no wait for threads finishing a call).
    assert signal.getsignal(signal.SIGINT) is signal.SIG_DFL


def test_a_command_that_saves_nothing_says_so_in_one_line() -> None:
    result = CliRunner().invoke(_app(None), ["run"])
    assert result.exit_code == EXIT_INTERRUPTED
    assert result.stderr.splitlines() == ["interrupted: nothing was saved"]


def test_what_one_command_said_does_not_reach_the_next(tmp_path: Path) -> None:
    app = _app(tmp_path)
    assert CliRunner().invoke(app, ["run"]).exit_code == EXIT_INTERRUPTED
    assert CliRunner().invoke(app, ["other"]).exit_code == 0
    assert interrupt.interrupted_lines() == ["interrupted: nothing was saved"]


def test_the_reso_app_answers_ctrl_c_with_this_group() -> None:
    from reso.evals.cli import app

    assert app.info.cls is ResoGroup


def test_answers_saved_counts_the_result_lines_of_a_run_or_of_a_job_of_runs(tmp_path: Path) -> None:
    assert answers_saved(tmp_path / "none") == f"no answer was saved yet (in {tmp_path / 'none'})"
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.jsonl").write_text('{"id": 1}\n')
    assert answers_saved(tmp_path / "a") == f"1 answered question saved in {tmp_path / 'a'}"
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.jsonl").write_text('{"id": 1}\n{"id": 2}\n\n')
    assert answers_saved(tmp_path) == f"3 answered questions saved in {tmp_path}"


def test_the_rerun_command_is_quoted_and_hides_a_database_password() -> None:
    line = rerun_command(["eval", "--out", "my runs/x", "--db", "postgresql://me:s3cret@db/reso"])
    assert line == "reso eval --out 'my runs/x' --db 'postgresql://me:***@db/reso'"


def test_a_cancelled_subtask_cancels_its_future_without_an_error_in_its_callback() -> None:
    """Ctrl-C cancels the subtasks in flight: their done-callback must neither raise (asyncio printed
    'Exception in callback DagRun._finished' with a traceback for each) nor leave a future holding a
    CancelledError that nobody reads ('Future exception was never retrieved')."""
    from reso.graphs.run import DagRun

    errors: list[dict] = []

    async def main() -> asyncio.Future:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        run = object.__new__(DagRun)  # only its futures and tasks are used here
        run._futures, run._tasks, run.results = {}, {}, {}
        task = asyncio.create_task(asyncio.sleep(10))
        run._tasks["s"] = task
        future = run._future("s")
        task.add_done_callback(lambda done: run._finished("s", done))
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.sleep(0.01)
        return future

    future = asyncio.run(main())
    assert errors == [] and future.cancelled()
