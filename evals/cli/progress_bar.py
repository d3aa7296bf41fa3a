"""A progress bar for batch evaluations showing accuracy and cost so far."""

from __future__ import annotations

from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class EvalProgress:
    """Counts finished items; shows running accuracy and USD spent."""

    def __init__(self, total: int, label: str, *, quiet: bool = False) -> None:
        self.correct = 0
        self.done = 0
        self.cost = 0.0
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), disable=quiet)
        self._task = self._progress.add_task(label, total=total, stats="")

    def advance(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.correct += int(bool(row["correct"]))
        self.cost += row["usage"]["cost_usd"]
        self._progress.update(self._task, advance=1,
                              stats=f"acc {self.correct / self.done:.1%}  ${self.cost:.4f}")

    def __enter__(self) -> EvalProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
