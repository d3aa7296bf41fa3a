"""A live terminal view of one question's progress (rich), fed by the graph's streamed events."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from reso.graphs.records import Result


def _table(plan: list[dict[str, Any]], status: dict[str, str], detail: dict[str, str]) -> Table:
    table = Table(title="ReSo", show_lines=False)
    for column in ("subtask", "depends on", "status", "agent / answer"):
        table.add_column(column)
    for step in plan:
        table.add_row(step["id"], ", ".join(step["depends_on"]) or "-", status.get(step["id"], "waiting"),
                      detail.get(step["id"], ""))
    return table


async def _run(question: str, settings: Any, quiet: bool) -> Result:
    from reso.graphs.api import ReSo

    reso = ReSo(settings)
    console = Console(stderr=True, quiet=quiet)
    plan: list[dict[str, Any]] = []
    status: dict[str, str] = {}
    detail: dict[str, str] = {}
    result: Result | None = None
    with Live(_table(plan, status, detail), console=console, transient=False, auto_refresh=False) as live:
        async for event in reso.astream(question):
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
            live.update(_table(plan, status, detail), refresh=True)
    assert result is not None, "the graph ended without a result"
    return result


def run_with_progress(question: str, settings: Any, *, quiet: bool = False) -> Result:
    """Solve `question`, drawing progress on standard error unless `quiet`."""
    return asyncio.run(_run(question, settings, quiet))
