"""`reso solve`: answer one question with a live progress view, or as one JSON object."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer

NO_RECORDING_HINT = (
    "The default pool replays recorded answers to GSM8K questions and has none for this question. "
    "To answer any question, point --pool at a pool YAML whose models are real endpoints, e.g. "
    "`spec: openai:gpt-4o-mini` with OPENAI_API_KEY set, or an OpenAI-compatible server via `base_url` "
    "and `api_key_env` (examples in examples/pools/)."
)


TEAM_STAGE = "loading the team: pool, models, selector, scorer …"


class QuestionInputError(ValueError):
    """The question could not be read (missing, empty, unreadable or not UTF-8)."""


def read_question(question: str | None, file: Path | None) -> str:
    """The question from the argument, a file, or standard input (`-`).

    Raises:
        QuestionInputError: No question, an empty one, or a file that cannot be read as UTF-8 text.
    """
    if file is not None:
        try:
            text = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise QuestionInputError(f"cannot read question file {file}: not valid UTF-8 "
                                     f"(byte 0x{error.object[error.start]:02x} at offset {error.start})") from None
        except OSError as error:
            raise QuestionInputError(f"cannot read question file {file}: {error.strerror or error}") from None
    elif question == "-":
        text = sys.stdin.read()
    else:
        text = question or ""
    if not text.strip():
        raise QuestionInputError("no question given (argument, --file FILE, or - for standard input)")
    return text.strip()


def _fail(message: str, code: int) -> NoReturn:
    # One plain line, not typer's boxed usage panel: messages name files and fields and must stay whole.
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _first_line(error: BaseException) -> str:
    from pydantic import ValidationError

    if isinstance(error, ValidationError):  # its first line is only "1 validation error for X"
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        return f"{error.title}: field '{field}': {first['msg']}"
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _check_planner_options(planner: str | None, planner_model: str | None) -> None:
    from pydantic import ValidationError

    from reso.agents.profiles import ModelSpec
    from reso.graphs.planners.auto import PLANNER_NAMES

    if planner is not None and planner not in PLANNER_NAMES:
        raise QuestionInputError(f"unknown planner {planner!r}; choose one of {', '.join(PLANNER_NAMES)}")
    if planner_model is not None:
        try:
            ModelSpec(spec=planner_model)
        except ValidationError:
            raise QuestionInputError(
                f"--planner-model {planner_model!r} is not a model spec of the form PROVIDER:MODEL") from None


def settings_from_options(**options: Any) -> Any:
    from reso.graphs.settings import ReSoSettings

    return ReSoSettings().replace(**{k: v for k, v in options.items() if v is not None})


def failure_lines(result: Any) -> list[str]:
    """Why a run gave no answer, for standard error: one `error:` line with the distinct candidate errors
    (already scrubbed of keys by the agents layer), and the no-recording hint when replay agents had none."""
    from reso.agents.failures import FailureKind

    if result.answer is not None:
        return []
    errors = list(dict.fromkeys(c.error for step in result.steps for c in step.candidates if c.error))
    if result.status == "budget_exceeded":
        lines = ["error: no answer: the question's budget ran out before a final answer"]
    elif errors:
        shown = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
        lines = [f"error: no answer: every candidate failed: {shown}"]
    else:
        lines = [f"error: no answer ({result.status})"]
    if any(c.failure is FailureKind.NO_RECORDING for step in result.steps for c in step.candidates):
        lines.append(NO_RECORDING_HINT)
    return lines


def _run_context(*, planner: str | None, planner_model: str | None, pool: str | None, prices: Path | None,
                 **options: Any) -> Any:
    """Check the options, resolve the pool and build the team for the settings they give: the run's context
    (a `reso.graphs.context.RunContext`).

    The team is built here, before the live view starts, so a bad pool file, an unset key variable or an
    unknown scorer is one line and exit code 2, not a traceback.
    """
    _check_planner_options(planner, planner_model)
    from reso.agents.pool_source import pool_file_for
    from reso.graphs.context import RunContext
    from reso.graphs.team import team_for

    settings = settings_from_options(pool=pool_file_for(pool, prices), planner=planner, planner_model=planner_model,
                                     **options)
    return RunContext(settings=settings, team=team_for(settings))


def solve(
    question: Annotated[Optional[str], typer.Argument(help="The question; '-' reads standard input.")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", "-f", help="Read the question from a file.")] = None,
    pool: Annotated[Optional[str], typer.Option(
        help="Pool YAML or replay:FILE[,FILE…]; default: the embedded offline pool.")] = None,
    prices: Annotated[Optional[Path], typer.Option(help="Price list YAML for the pool's models.")] = None,
    planner: Annotated[Optional[str], typer.Option(help="auto | structural | llm.")] = None,
    planner_model: Annotated[Optional[str], typer.Option(help="Model spec for the LLM planner.")] = None,
    k: Annotated[Optional[int], typer.Option(help="Candidates per subtask.")] = None,
    scorer: Annotated[Optional[str], typer.Option(help="CRM scorer spec.")] = None,
    db: Annotated[Optional[str], typer.Option(envvar="RESO_DB_URL", show_envvar=False, help=(
        "DADB (agent reputations): a SQLite file or a postgresql:// URL; default $RESO_DB_URL."))] = None,
    max_usd: Annotated[Optional[float], typer.Option(help="USD budget for the question.")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="Token budget for the question.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
) -> None:
    """Answer QUESTION with a self-organising team of agents."""
    from reso.evals.progress import progress_console, run_with_progress, stage

    console = progress_console(quiet=json_output)
    try:
        text = read_question(question, file)
        # The first progress line, before any heavy import: building the team loads the agents layer, the
        # pool's recordings or clients, the selector's index and the scorer, which takes a second or two.
        with stage(console, TEAM_STAGE):
            run = _run_context(planner=planner, planner_model=planner_model, pool=pool, prices=prices,
                               k=k, scorer=scorer, db=db, max_usd=max_usd, max_tokens=max_tokens)
    except ValueError as error:  # every configuration error of the layers below is a ValueError
        _fail(_first_line(error), 2)
    result = run_with_progress(text, run, console=console)
    if json_output:
        typer.echo(json.dumps(result.to_json()))
    else:
        typer.echo(f"answer: {result.answer if result.answer is not None else '(none)'}  "
                   f"[{result.status}; {result.usage.total_tokens} tokens; ${result.usage.cost_usd:.4f}; "
                   f"{result.latency_s:.2f}s]")
    for line in failure_lines(result):
        typer.echo(line, err=True)
    if result.answer is None:
        raise typer.Exit(1)
