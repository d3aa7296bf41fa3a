"""`reso solve`: answer one question with a live progress view, or as one JSON object."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

NO_RECORDING_HINT = (
    "The default pool replays recorded answers to GSM8K questions and has none for this question. "
    "To answer any question, point --pool at a pool YAML whose models are real endpoints, e.g. "
    "`spec: openai:gpt-4o-mini` with OPENAI_API_KEY set, or an OpenAI-compatible server via `base_url` "
    "and `api_key_env` (examples in examples/pools/)."
)


def read_question(question: str | None, file: Path | None) -> str:
    """The question from the argument, a file, or standard input (`-`)."""
    if file is not None:
        try:
            text = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise typer.BadParameter(f"cannot read question file {file}: {error}") from None
    elif question == "-":
        text = sys.stdin.read()
    else:
        text = question or ""
    if not text.strip():
        raise typer.BadParameter("no question given (argument, --file FILE, or - for standard input)")
    return text.strip()


def settings_from_options(**options: Any) -> Any:
    from reso.graphs.settings import ReSoSettings

    return ReSoSettings().replace(**{k: v for k, v in options.items() if v is not None})


def _missing_recording(result: Any) -> bool:
    """No answer, and a replay agent was asked something it has no recording of."""
    errors = [c.error or "" for step in result.steps for c in step.candidates]
    return result.answer is None and any(error.startswith("NoRecordingError") for error in errors)


def solve(
    question: Annotated[Optional[str], typer.Argument(help="The question; '-' reads standard input.")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", "-f", help="Read the question from a file.")] = None,
    pool: Annotated[Optional[str], typer.Option(help="Pool YAML; default: the embedded offline pool.")] = None,
    planner: Annotated[Optional[str], typer.Option(help="auto | structural | llm.")] = None,
    planner_model: Annotated[Optional[str], typer.Option(help="Model spec for the LLM planner.")] = None,
    k: Annotated[Optional[int], typer.Option(help="Candidates per subtask.")] = None,
    scorer: Annotated[Optional[str], typer.Option(help="CRM scorer spec.")] = None,
    db: Annotated[Optional[str], typer.Option(help="DADB file (agent reputations).")] = None,
    max_usd: Annotated[Optional[float], typer.Option(help="USD budget for the question.")] = None,
    max_tokens: Annotated[Optional[int], typer.Option(help="Token budget for the question.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
) -> None:
    """Answer QUESTION with a self-organising team of agents."""
    text = read_question(question, file)
    try:
        settings = settings_from_options(pool=pool, planner=planner, planner_model=planner_model, k=k,
                                         scorer=scorer, db=db, max_usd=max_usd, max_tokens=max_tokens)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    from reso.evals.progress import run_with_progress

    result = run_with_progress(text, settings, quiet=json_output)
    if json_output:
        typer.echo(json.dumps(result.to_json()))
    else:
        typer.echo(f"answer: {result.answer if result.answer is not None else '(none)'}  "
                   f"[{result.status}; {result.usage.total_tokens} tokens; ${result.usage.cost_usd:.4f}; "
                   f"{result.latency_s:.2f}s]")
    if _missing_recording(result):
        typer.echo(NO_RECORDING_HINT, err=True)
    if result.answer is None:
        raise typer.Exit(1)
