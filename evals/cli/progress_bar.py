"""A progress bar for batch evaluations showing accuracy and cost so far.

A resumed run starts the bar at the items already done (and their accuracy and cost), so a rerun of a
finished run shows 20/20, not 0/20.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def resumed_rows(results: Path, ids: Collection[str]) -> list[dict[str, Any]]:
    """The rows of `results` (a run's results.jsonl) for the items `ids` that a run resuming there will skip;
    none when the file cannot be read (the run itself then says why)."""
    from reso.evals.results import ResultsFormatError, finished_rows

    try:
        done = finished_rows(results)
    except (OSError, UnicodeDecodeError, ResultsFormatError):
        return []
    return [row for item, row in done.items() if item in ids]


class EvalProgress:
    """Counts finished items, starting from those `resumed`; shows running accuracy and USD spent."""

    def __init__(self, total: int, label: str, *, quiet: bool = False,
                 resumed: Iterable[dict[str, Any]] = ()) -> None:
        self.correct = 0
        self.done = 0
        self.cost = 0.0
        for row in resumed:
            self._count(row)
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), disable=quiet)
        # Started at `completed` rather than advanced there, so rich's speed estimate sees no burst.
        self._task = self._progress.add_task(label, total=total, completed=self.done, stats=self._stats())

    def _count(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.correct += int(bool(row["correct"]))
        self.cost += row["usage"]["cost_usd"]

    def _stats(self) -> str:
        return f"acc {self.correct / self.done:.1%}  ${self.cost:.4f}" if self.done else ""

    def advance(self, row: dict[str, Any]) -> None:
        self._count(row)
        self._progress.update(self._task, advance=1, stats=self._stats())

    @property
    def completed(self) -> int:
        """Items the bar shows as done."""
        return int(self._progress.tasks[0].completed)

    def __enter__(self) -> EvalProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
