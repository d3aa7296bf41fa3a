"""`reso solve`: answer one question with a live progress view, or as one JSON object; with `--checkpoint`,
saved under a thread that a rerun with `--thread` resumes (from any machine, on a `postgresql://` store).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import textwrap
import uuid
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from reso.evals.cli.errors import fail
from reso.evals.cli.interrupt import resumable
from reso.evals.cli.options import POOL_PRICES, PRICES_HELP
from reso.evals.cli.question import QuestionInputError, read_question
from reso.evals.cli.settings_options import GivenSettings, Tree, settings_options
from reso.graphs.settings import ReSoSettings

NO_RECORDING_HINT = (
    "The replay pool has no recorded answer to this question (the default pool replays twelve models' answers "
    "to recorded MATH level-5 and GSM8K questions; its exact tool answers plain arithmetic). "
    "To answer any question, point --pool at a pool YAML whose models are real endpoints, e.g. "
    "`spec: openai:gpt-4o-mini` with OPENAI_API_KEY set, or a local OpenAI-compatible server (Ollama, vLLM, "
    "llama.cpp's llama-server) via `base_url` (examples in examples/pools/)."
)


TEAM_STAGE = "loading the team: pool, models, selector, scorer …"


def _first_line(error: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(error, ValidationError):  # its first line is only "1 validation error for X"
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        return f"{error.title}: field '{field}': {first['msg']}"
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _check_planner_model(planner_model: str | None) -> None:
    from pydantic import ValidationError

    from reso.agents.profiles import ModelSpec

    if planner_model is not None:
        try:
            ModelSpec(spec=planner_model)
        except ValidationError:
            raise QuestionInputError(
                f"plan.planner_model {planner_model!r} is not a model spec of the form PROVIDER:MODEL") from None


def _check_thread_options(checkpoint: str | None, thread: str | None) -> None:
    if thread is not None and not thread.strip():
        raise QuestionInputError("--thread must not be empty")
    if thread is not None and not checkpoint:
        raise QuestionInputError("--thread needs --checkpoint PATH|postgresql://… (or $RESO_CHECKPOINT_URL): "
                                 "without a checkpoint store there is no thread to save or resume")


def _store_name(checkpoint: str) -> str:
    from reso.agents.dadb.url import is_postgres_url, redact_url

    return redact_url(checkpoint) if is_postgres_url(checkpoint) else checkpoint


def _saved_run(run: Any, checkpoint: str, thread: str) -> Any:
    """What `checkpoint` holds under `thread` (a `reso.graphs.api.SavedRun`, or None); opening the store
    here also checks it before the run starts.

    Raises:
        QuestionInputError: The store cannot be opened (its URL's password hidden).
    """
    import sqlite3

    from reso.agents.dadb.url import is_postgres_url
    from reso.graphs.api import ReSo
    from reso.graphs.checkpointer import CheckpointError

    try:
        if not is_postgres_url(checkpoint):
            # Checked here, synchronously: aiosqlite's thread, failing to open a folder, would print a
            # traceback of its own once the event loop is gone.
            Path(checkpoint).parent.mkdir(parents=True, exist_ok=True)
            with contextlib.closing(sqlite3.connect(checkpoint)) as connection:
                connection.execute("PRAGMA schema_version")
        return asyncio.run(ReSo.in_run(run, checkpoint_path=checkpoint).asaved(thread))
    except CheckpointError as error:
        raise QuestionInputError(f"--checkpoint {_first_line(error)}") from None
    except (sqlite3.Error, OSError) as error:
        raise QuestionInputError(f"--checkpoint {checkpoint}: cannot open as a checkpoint store: {error}") from None


def _question_to_run(text: str | None, saved: Any, checkpoint: str, thread: str) -> str:
    """The question the run answers: the saved one when resuming, which a question given must match.

    Raises:
        QuestionInputError: No question and nothing saved under the thread, or a saved run of another question.
    """
    if saved is None:
        if text is None:
            raise QuestionInputError(f"--thread {thread}: {_store_name(checkpoint)} holds no run of this thread "
                                     "to resume; give the question to start one")
        return text
    question: str = saved.result.question
    if text is not None and text != question.strip():
        raise QuestionInputError(
            f"--thread {thread}: {_store_name(checkpoint)} holds a run of another question "
            f"({textwrap.shorten(question, 60)!r}); leave the question out to resume it, or choose another thread")
    return question


def _resumable_thread(checkpoint: str, thread: str) -> None:
    """Ctrl-C: the steps finished so far are saved under `thread`, which the same command resumes with
    `--thread`."""
    import sys

    arguments = sys.argv[1:]
    if not any(argument == "--thread" or argument.startswith("--thread=") for argument in arguments):
        arguments = [*arguments, "--thread", thread]
    resumable(lambda: f"the finished steps are saved in {_store_name(checkpoint)} under thread {thread}",
              arguments)


def failure_lines(result: Any) -> list[str]:
    """Why a run gave no answer, for standard error: one `error:` line with the distinct candidate errors
    (already scrubbed of keys by the agents layer), and the no-recording hint when replay agents had none."""
    from reso.agents.adapters.failures import FailureKind
    from reso.graphs.run_records import RunStatus

    if result.answer is not None:
        return []
    errors = list(dict.fromkeys(c.error for step in result.steps for c in step.candidates if c.error))
    if result.status == RunStatus.BUDGET_EXCEEDED:
        lines = ["error: no answer: the question's budget ran out before a final answer"]
    elif errors:
        shown = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
        lines = [f"error: no answer: every candidate failed: {shown}"]
    else:
        lines = [f"error: no answer ({result.status})"]
    if any(c.failure is FailureKind.NO_RECORDING for step in result.steps for c in step.candidates):
        lines.append(NO_RECORDING_HINT)
    return lines


def _run_context(settings: ReSoSettings, prices: Path | None) -> Any:
    """Resolve the pool and build the team for `settings`: the run's context (a `reso.graphs.context.RunContext`).

    The team is built here, before the live view starts, so a bad pool file, an unset key variable or an
    unknown scorer is one line and exit code 2, not a traceback.
    """
    _check_planner_model(settings.plan.planner_model or None)
    from reso.agents.pool_source import pool_file_for
    from reso.graphs.context import RunContext
    from reso.graphs.team import team_for

    settings = settings.replace(pool=pool_file_for(settings.pool or None, prices))
    return RunContext(settings=settings, team=team_for(settings))


SOLVE_FORMER_FLAGS = {"--planner": "plan.planner", "--planner-model": "plan.planner_model", "--k": "asking.k",
                      "--max-usd": "limits.max_usd", "--max-tokens": "limits.max_tokens"}
"""`reso solve`'s flags before its options were generated, and the settings that took their place."""


@settings_options((Tree("", ReSoSettings),), SOLVE_FORMER_FLAGS)
def solve(
    question: Annotated[Optional[str], typer.Argument(help="The question; '-' reads standard input.")] = None,
    file: Annotated[Optional[Path], typer.Option(
        "--file", "-f", help="Read the question from a file instead of QUESTION.", show_default="none")] = None,
    prices: Annotated[Optional[Path], typer.Option(help=PRICES_HELP, show_default=POOL_PRICES)] = None,
    checkpoint: Annotated[Optional[str], typer.Option(envvar="RESO_CHECKPOINT_URL", show_envvar=False, help=(
        "Save the run under its thread, to resume it: a SQLite file or a postgresql:// URL; "
        "default $RESO_CHECKPOINT_URL."))] = None,
    thread: Annotated[Optional[str], typer.Option(help=(
        "With --checkpoint: the thread to save the run under, or to resume (QUESTION may then be left out); "
        "default: a new one, printed first."))] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
    *,
    given: GivenSettings,
) -> None:
    """Answer QUESTION with a self-organising team of agents (every setting: `reso settings`)."""
    from reso.evals.cli.progress import progress_console, run_with_progress, stage
    from reso.graphs.dadb_notice import untrained_dadb

    console = progress_console(quiet=json_output)
    checkpoint = checkpoint or None  # an empty $RESO_CHECKPOINT_URL is no store
    saved = None
    try:
        _check_thread_options(checkpoint, thread)
        resuming = thread is not None and question is None and file is None
        text = None if resuming else read_question(question, file)
        new_thread = checkpoint is not None and thread is None
        if new_thread:
            thread = uuid.uuid4().hex
        # The first progress line, before any heavy import: building the team loads the agents layer, the
        # pool's recordings or clients, the selector's index and the scorer, which takes a second or two.
        with stage(console, TEAM_STAGE):
            run = _run_context(given.build("", ReSoSettings()), prices)
            if checkpoint is not None and thread is not None:
                saved = _saved_run(run, checkpoint, thread)
                text = _question_to_run(text, saved, checkpoint, thread)
            notice = untrained_dadb(run.settings, run.require_team().dadb)
    except ValueError as error:  # every configuration error of the layers below is a ValueError
        fail(_first_line(error), 2)
    assert text is not None
    if new_thread:  # said before the run starts: a run that is killed prints nothing after
        typer.echo(f"note: thread {thread}: if this run stops, rerun with --thread {thread} to resume it",
                   err=True)
    if checkpoint is not None and thread is not None:
        _resumable_thread(checkpoint, thread)
    if saved is not None and saved.ended:  # answered before: its saved result, without asking anyone again
        result = saved.result
    else:
        if notice is not None:
            typer.echo(notice.line, err=True)
        result = run_with_progress(text, run, console=console, checkpoint=checkpoint, thread_id=thread,
                                   plan=saved.result.plan if saved is not None else None)
    if json_output:
        typer.echo(json.dumps({**result.to_json(), **({"thread_id": thread} if thread else {})}))
    else:
        typer.echo(f"answer: {result.answer if result.answer is not None else '(none)'}  "
                   f"[{result.status}; {result.usage.total_tokens} tokens; ${result.usage.cost_usd:.4f}; "
                   f"{result.latency_s:.2f}s]")
    for line in failure_lines(result):
        typer.echo(line, err=True)
    if result.answer is None:
        raise typer.Exit(1)
