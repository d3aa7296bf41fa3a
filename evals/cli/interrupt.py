"""What Ctrl-C does in every `reso` command: at most two lines on standard error (what was saved, and the
command that resumes) and exit code 130, without a traceback.

One place handles it: `ResoGroup`, the click group of the `reso` app, catches the `KeyboardInterrupt` that
ends whatever command runs (asyncio turns Ctrl-C into one, after cancelling the run's tasks). A command that
saves work as it goes says so once its options are checked, through `resumable`: the folder or store its
work lands in, and (when the same command line would not do) the command that resumes it.
"""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

EXIT_INTERRUPTED = 130
"""The exit code of a command ended by Ctrl-C (128 + SIGINT, as a shell reports it)."""

RESULTS_FILE = "results.jsonl"


@dataclass(frozen=True)
class _Resumable:
    saved: Callable[[], str]
    rerun: Sequence[str] | None


_current: _Resumable | None = None


def resumable(saved: Callable[[], str], rerun: Sequence[str] | None = None) -> None:
    """Say what the running command has saved when it is interrupted: `saved()` (called then) describes it,
    and `rerun`, the arguments after `reso`, resume it (default: the same command line)."""
    global _current
    _current = _Resumable(saved, rerun)


def forget() -> None:
    """The next command starts with nothing said (several commands may run in one process, in tests)."""
    global _current
    _current = None


def answers_saved(folder: Path) -> str:
    """What a run (or a job of runs) into `folder` has saved: its answered questions, read from the results
    files (one line per answered question, written as each is answered)."""
    files = [folder / RESULTS_FILE] if (folder / RESULTS_FILE).is_file() else (
        sorted(folder.rglob(RESULTS_FILE)) if folder.is_dir() else [])
    answered = 0
    for path in files:
        try:
            with path.open("rb") as handle:
                answered += sum(1 for line in handle if line.strip())
        except OSError:
            continue
    if not answered:
        return f"no answer was saved yet (in {folder})"
    return f"{answered} answered question{'s' if answered != 1 else ''} saved in {folder}"


def rerun_command(arguments: Sequence[str] | None = None) -> str:
    """The command line that runs `reso` with `arguments` (default: this process's), quoted for a shell, with
    the password of any PostgreSQL URL in it hidden."""
    from reso.agents.dadb.url import redact

    return shlex.join(["reso", *(redact(argument) for argument in
                                 (sys.argv[1:] if arguments is None else arguments))])


def interrupted_lines() -> list[str]:
    """What an interrupted command prints: what it saved and how to resume, or that nothing was saved."""
    if _current is None:
        return ["interrupted: nothing was saved"]
    try:
        saved = _current.saved()
    except Exception:  # a line about the folder must not raise on the way out
        saved = "what finished is saved"
    return [f"interrupted: {saved}", f"to resume, run: {rerun_command(_current.rerun)}"]


class ResoGroup(TyperGroup):
    """The `reso` app's click group: an interrupted command says what it saved and exits 130."""

    def invoke(self, ctx: Any) -> Any:
        forget()
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            if threading.current_thread() is threading.main_thread():
                # A second Ctrl-C from here on ends the process at once, quietly (threads still finishing
                # a call or a write are not waited for).
                signal.signal(signal.SIGINT, signal.SIG_DFL)
            for line in interrupted_lines():
                typer.echo(line, err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        finally:
            forget()
