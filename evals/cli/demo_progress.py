"""How `reso demo` shows its progress: on a terminal one live display (the benchmark and its phase, the
current run's items with accuracy, cost and ETA, the benchmark's items with its ETA, the whole job's items
with its ETA and time in all, a timer while a fit phase runs, a CRM fitted in the background; redrawn four
times a second, fits included), with a line per finished run above it; anywhere else (a pipe, a file, CI)
that line per finished run alone, plain text. Both write to standard error, and neither reads a line as rich markup or
highlights it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from reso.evals.cli.demo_tally import Tally, background_line, clock_text, eta_text, finished_line, total_text
from reso.evals.jobs.events import FITS, DemoProgress, PlannedRun, RunStart

BAR_WIDTH = 24
REFRESH_S = 0.25


class PlainProgress:
    """A plain line per finished run, per note and per background task that ended; nothing else."""

    short = False
    """Whether a finished run's line leaves out its benchmark and folder."""

    def __init__(self, stream: IO[str], tally: Tally | None = None) -> None:
        self.stream = stream
        self.tally = tally or Tally()

    def _line(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def plan(self, benchmark: str, runs: Sequence[PlannedRun]) -> None:
        self.tally.plan(benchmark, runs)

    def start_phase(self, benchmark: str, phase: str) -> None:
        self.tally.start_phase(benchmark, phase)

    def run_started(self, run: RunStart) -> None:
        self.tally.run_started(run)

    def item_done(self, row: dict[str, Any]) -> None:
        self.tally.item_done(row)

    def run_finished(self, run: RunStart, summary: dict[str, Any]) -> None:
        self._line(finished_line(self.tally, self.tally.run_finished(run, summary), summary, short=self.short))

    def background(self, task: str, running: bool, error: str | None = None) -> None:
        state = self.tally.background_changed(task, running, error)
        if not running:
            self._line(background_line(task, state))

    def note(self, line: str) -> None:
        self._line(line)


class LiveProgress(PlainProgress):
    """The live display; the lines `PlainProgress` writes go above it, dimmed and short, under a heading
    for each benchmark."""

    short = True

    def __init__(self, console: Console, tally: Tally | None = None) -> None:
        super().__init__(console.file, tally)
        self.console = console
        self._spinner = Spinner("dots")
        """The benchmark whose heading was printed last."""
        # Redrawn by our own thread rather than Live's: rich writes a line printed above a live display after
        # letting go of the display's lock, so a redraw in between leaves the display misplaced. Here a
        # redraw and a printed line each hold `_drawing` until written.
        self._live = Live(console=console, get_renderable=self.render, auto_refresh=False, transient=True)
        self._drawing = threading.RLock()
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="reso-demo-progress", daemon=True)

    def _tick(self) -> None:
        while not self._stop.wait(REFRESH_S):
            with self._drawing:
                self._live.refresh()

    def _line(self, line: str) -> None:
        # Text, not a string: a path or a method name is neither markup nor something to highlight.
        with self._drawing:
            self.console.print(Text(line, style="dim"))

    def start_phase(self, benchmark: str, phase: str) -> None:
        previous = self.tally.current_phase
        if previous is None or previous.benchmark != benchmark:
            with self._drawing:
                self.console.print(Text(benchmark, style="bold"))
        super().start_phase(benchmark, phase)

    def render(self) -> RenderableType:
        tally = self.tally
        elapsed = Text(f" · {clock_text(tally.elapsed())} elapsed", style="dim")
        self._spinner.update(text=Text.assemble((tally.benchmark, "bold"), " · ", tally.phase, elapsed))
        # The bar takes what the other columns leave, up to BAR_WIDTH; on a narrow terminal a long label is
        # cut short rather than the bar.
        rows = Table.grid(padding=(0, 1))
        rows.add_column(no_wrap=True, overflow="ellipsis", max_width=min(40, max(22, self.console.width - 58)))
        rows.add_column(ratio=1, max_width=BAR_WIDTH)
        rows.add_column(justify="right", no_wrap=True)
        rows.add_column(no_wrap=True)
        current = tally.current
        if current is not None:
            stats = (f"acc {current.correct / current.done:.1%}  ${current.cost_usd:.4f}  " if current.done else "")
            rows.add_row(Text(f"  {current.run.label}"), ProgressBar(current.run.items, current.done),
                         f"{current.done}/{current.run.items}", Text(f"{stats}ETA {clock_text(tally.run_eta())}"))
        done, total = tally.items()
        if total:
            finished, planned = tally.runs()
            rows.add_row(Text(f"  benchmark, run {min(finished + 1, planned)}/{planned}", style="bold"),
                         ProgressBar(total, done), f"{done}/{total}",
                         Text(eta_text(tally.benchmark_eta())))
        benchmarks = list(tally.plans)
        done, total = tally.items(benchmarks)
        if total:
            place = benchmarks.index(tally.benchmark) + 1 if tally.benchmark in benchmarks else 1
            rows.add_row(Text(f"  job, benchmark {place}/{len(benchmarks)}", style="bold"),
                         ProgressBar(total, done), f"{done}/{total}",
                         Text(f"{eta_text(tally.job_eta())} · {total_text(tally.job_total())}"))
        lines: list[RenderableType] = [self._spinner, rows]
        phase = tally.current_phase
        if phase is not None and phase.name in FITS and current is None:  # a timer while a fit runs
            left = tally.phase_eta()
            lines.append(Text(f"  {phase.name}: {clock_text(tally.clock() - phase.started)}, "
                              f"{'ETA ' + clock_text(left) if left is not None else 'not timed before'}",
                              style="dim"))
        for task, state in tally.background.items():
            if state.ended is None:
                lines.append(Text(f"  {task}: fitting in a second process "
                                  f"({clock_text(tally.clock() - state.started)})", style="dim"))
        return Group(*lines)

    def __enter__(self) -> LiveProgress:
        with self._drawing:
            self._live.start(refresh=True)
        self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._ticker.join()
        with self._drawing:
            self._live.stop()


def is_live(console: Console) -> bool:
    """Whether `console` writes to an interactive terminal: FORCE_COLOR (set in some CI) makes rich treat a
    pipe as a terminal, so the stream itself must be a TTY."""
    isatty = getattr(console.file, "isatty", None)
    try:
        return console.is_interactive and isatty is not None and bool(isatty())
    except ValueError:  # a closed stream
        return False


@contextmanager
def demo_progress(console: Console) -> Iterator[DemoProgress]:
    """The display for `reso demo` on `console`: live on a terminal, plain lines elsewhere."""
    if is_live(console):
        with LiveProgress(console) as live:
            yield live
    else:
        yield PlainProgress(console.file)
