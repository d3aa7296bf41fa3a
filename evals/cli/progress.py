"""A live terminal view of one question's progress (rich): the stage before the plan, then the task table fed
by the graph's streamed events.

The view draws on standard error, and only on a terminal: piped or captured, standard error carries the
final table and the one-line errors alone (docs/bad-input.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table

if TYPE_CHECKING:
    from reso.graphs.context import RunContext
    from reso.graphs.run_records import Result

PLANNING = "planning the question …"


def _table(plan: list[dict[str, Any]], status: dict[str, str], detail: dict[str, str]) -> Table:
    table = Table(title="ReSo", show_lines=False)
    for column in ("subtask", "depends on", "status", "agent / answer"):
        table.add_column(column)
    for step in plan:
        table.add_row(step["id"], ", ".join(step["depends_on"]) or "-", status.get(step["id"], "waiting"),
                      detail.get(step["id"], ""))
    return table


def progress_console(*, quiet: bool = False) -> Console:
    """Standard error as a rich console; a quiet one draws nothing (the `--json` output)."""
    return Console(stderr=True, quiet=quiet)


@contextmanager
def stage(console: Console, text: str) -> Iterator[None]:
    """Show `text` beside a spinner while the block runs, drawn at once on entry and erased on exit.

    On a terminal the line appears before the block's work starts; anywhere else (a pipe, a file, a quiet
    console) nothing is written, so an error raised inside leaves standard error to its one `error:` line.
    """
    with Live(Spinner("dots", text=text), console=console, transient=True, refresh_per_second=12.5) as live:
        live.refresh()  # Live's own thread would first draw a frame later; the stage shows before its work
        yield


def _view(plan: list[dict[str, Any]], status: dict[str, str], detail: dict[str, str]) -> RenderableType:
    # Until the plan arrives the table has no rows; the stage says what is happening instead.
    return _table(plan, status, detail) if plan else Spinner("dots", text=PLANNING)


async def _run(question: str, run: RunContext, console: Console, checkpoint: str | None,
               thread_id: str | None, plan: list[dict[str, Any]]) -> Result:
    from reso.graphs.api import ReSo

    status: dict[str, str] = {}
    detail: dict[str, str] = {}
    result: Result | None = None
    with Live(_view(plan, status, detail), console=console, transient=False, auto_refresh=False) as live:
        live.refresh()
        async for event in ReSo.in_run(run, checkpoint_path=checkpoint).astream(question, thread_id=thread_id):
            kind = event.get("event")
            if kind == "plan":
                plan = event["plan"]
            elif kind == "subtask_started":
                status[event["id"]] = "running"
            elif kind == "candidates":
                detail[event["id"]] = ", ".join(c["agent"] for c in event["candidates"])
            elif kind == "subtask_done":
                status[event["id"]] = event["status"]
                detail[event["id"]] = f"{event['agent']}: {event['value']}"
            elif kind == "result":
                result = event["result"]
                # A resumed run streams only the subtasks it had left; the result holds them all.
                status |= {step.id: step.status for step in result.steps}
                detail |= {step.id: f"{step.agent}: {step.value}" for step in result.steps}
            live.update(_view(plan, status, detail), refresh=True)
    if not console.is_terminal:  # Live leaves its last frame without a line end off a terminal
        console.line()
    assert result is not None, "the graph ended without a result"
    return result


def run_with_progress(question: str, run: RunContext, *, quiet: bool = False, console: Console | None = None,
                      checkpoint: str | None = None, thread_id: str | None = None,
                      plan: list[dict[str, Any]] | None = None) -> Result:
    """Solve `question` in the run context `run`, drawing progress on `console` (standard error by default)
    unless `quiet`; with `checkpoint` (`reso.graphs.checkpointer`), saved under `thread_id` and resumed from
    it when unfinished there, `plan` being the plan it saved (its planning does not run again)."""
    return asyncio.run(_run(question, run, console or progress_console(quiet=quiet), checkpoint, thread_id,
                            list(plan or [])))
