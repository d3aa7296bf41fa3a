"""What `reso demo` has done so far and how long the rest should take: the state its displays draw
(`reso.evals.cli.demo_progress`), kept apart from the drawing so that it is checked without a terminal.

Paces come from the items answered now, never from resumed ones. A run's ETA follows its own pace once
one of its items is done (before that, the pace earlier runs of its kind had). The benchmark's ETA is the
current run's plus each run left at the pace of its kind: the same method family in the same mode when
one has run (a `single:` run after a `single:` run), else any run of that mode. Until a mode still to
come has a pace (the first benchmark's test runs, while it trains), the benchmark's ETA is unknown. Time
spent waiting for a task in another process cannot be foreseen: while the job waits, the ETA is a lower
bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reso.evals.jobs.events import WAITING_FOR_CRM, PlannedRun, RunStart


@dataclass
class RunTally:
    """The run in progress: its items done (the resumed ones included), right, and what they cost."""

    run: RunStart
    started: float
    done: int
    correct: int
    cost_usd: float
    live: int = 0
    """Items answered by this process (not resumed)."""


@dataclass
class Background:
    """A task in another process: when it started, and how it ended (None while it runs)."""

    started: float
    ended: float | None = None
    error: str | None = None


def _kind(mode: str, label: str) -> str:
    """A run's method family in its mode, whose pace predicts its own: `test/single`, `train/reso`."""
    return f"{mode}/{label.split(' ', 1)[0].split(':', 1)[0]}"


@dataclass
class Tally:
    """The job's progress as the events of `reso.evals.jobs.events.DemoProgress` report it."""

    clock: Callable[[], float] = time.monotonic
    benchmark: str = ""
    stage: str = ""
    planned: list[PlannedRun] = field(default_factory=list)
    finished: dict[str, int] = field(default_factory=dict)
    """The benchmark's finished runs: folder name → items its folder holds."""
    current: RunTally | None = None
    background: dict[str, Background] = field(default_factory=dict)
    _paces: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Seconds and items answered now, by mode and by `_kind`."""

    def __post_init__(self) -> None:
        self.started = self.clock()

    def plan(self, benchmark: str, runs: Sequence[PlannedRun]) -> None:
        if benchmark != self.benchmark:
            self.benchmark, self.finished = benchmark, {}
        self.planned = list(runs)

    def start_stage(self, benchmark: str, stage: str) -> None:
        self.benchmark, self.stage = benchmark, stage

    def run_started(self, run: RunStart) -> None:
        self.current = RunTally(run, self.clock(), run.done, run.correct, run.cost_usd)

    def item_done(self, row: dict[str, Any]) -> None:
        current = self.current
        if current is None:
            return
        current.done += 1
        current.live += 1
        current.correct += int(bool(row["correct"]))
        current.cost_usd += row["usage"]["cost_usd"]

    def run_finished(self, run: RunStart, summary: dict[str, Any]) -> RunTally:
        """Count the run as finished (its folder holds `summary["n"]` items) and return its tally."""
        current = self.current if self.current is not None and self.current.run == run else \
            RunTally(run, self.clock(), run.done, run.correct, run.cost_usd)
        if current.live:
            seconds = self.clock() - current.started
            for key in (run.mode, _kind(run.mode, run.label)):
                spent, items = self._paces.get(key, (0.0, 0))
                self._paces[key] = (spent + seconds, items + current.live)
        self.finished[run.folder.name] = int(summary["n"])
        self.current = None
        return current

    def background_changed(self, task: str, running: bool, error: str | None = None) -> Background:
        if running or task not in self.background:
            self.background[task] = Background(self.clock())
        if not running:
            self.background[task].ended, self.background[task].error = self.clock(), error
        return self.background[task]

    def seconds_per_item(self, mode: str, label: str) -> float | None:
        """The pace of runs like this one so far (see the module docstring); None before any."""
        for key in (_kind(mode, label), mode):
            spent, items = self._paces.get(key, (0.0, 0))
            if items:
                return spent / items
        return None

    def run_eta(self) -> float | None:
        """Seconds the current run should still take; None when unknown or no run is in progress."""
        current = self.current
        if current is None:
            return None
        left = max(current.run.items - current.done, 0)
        if not left:
            return 0.0
        if current.live:
            return left * (self.clock() - current.started) / current.live
        pace = self.seconds_per_item(current.run.mode, current.run.label)
        return None if pace is None else left * pace

    def _is_current(self, planned: PlannedRun) -> bool:
        return self.current is not None and self.current.run.folder.name == planned.folder

    def items(self) -> tuple[int, int]:
        """The benchmark's items done (in finished runs, the current one and resumed runs to come) and all
        its runs' items."""
        done = 0
        for planned in self.planned:
            if planned.folder in self.finished:
                done += self.finished[planned.folder]
            elif self._is_current(planned):
                done += self.current.done if self.current is not None else 0
            else:
                done += planned.done
        return done, sum(planned.items for planned in self.planned)

    def runs(self) -> tuple[int, int]:
        """The benchmark's runs finished, and planned."""
        return sum(planned.folder in self.finished for planned in self.planned), len(self.planned)

    def benchmark_eta(self) -> tuple[float, bool]:
        """Seconds the benchmark's runs should still take, and whether that is all it should take: without a
        pace for some runs, or while the job waits for a task in another process, the seconds are a lower
        bound."""
        waiting = self.stage == WAITING_FOR_CRM and any(task.ended is None for task in self.background.values())
        eta, known = 0.0, not waiting
        if self.current is not None:
            current = self.run_eta()
            eta, known = (current, known) if current is not None else (0.0, False)
        for planned in self.planned:
            left = planned.items - planned.done
            if planned.folder in self.finished or self._is_current(planned) or left <= 0:
                continue
            pace = self.seconds_per_item(planned.mode, planned.label)
            if pace is None:
                known = False
            else:
                eta += left * pace
        return eta, known

    def elapsed(self) -> float:
        return self.clock() - self.started


def clock_text(seconds: float | None) -> str:
    """`m:ss`, or `h:mm:ss` from an hour; `-:--` when unknown."""
    if seconds is None:
        return "-:--"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def eta_text(eta: tuple[float, bool]) -> str:
    """`ETA m:ss`; `ETA > m:ss` when that is a lower bound; `ETA -:--` when nothing is known."""
    seconds, known = eta
    return f"ETA {clock_text(seconds)}" if known else f"ETA > {clock_text(seconds)}" if seconds else "ETA -:--"


def finished_line(tally: Tally, run: RunTally, summary: dict[str, Any], *, short: bool = False) -> str:
    """One plain line for a finished run: the benchmark, the run's place among its runs, its label, items,
    accuracy, cost, time and folder; how many items were there before when it resumed. `short`: without
    the benchmark and the folder (a live display shows the one, and names the folders at the end)."""
    finished, planned = tally.runs()
    place = f"run {finished}/{planned} · " if run.run.folder.name in {p.folder for p in tally.planned} else ""
    resumed = f" ({run.run.done} done before)" if run.run.done else ""
    seconds = tally.clock() - run.started
    line = (f"{place}{run.run.label}: {summary['n']}/{run.run.items} items{resumed}, "
            f"accuracy {summary['accuracy']:.1%}, ${summary['cost_usd']:.4f}, {clock_text(seconds)}")
    return line if short else f"{run.run.benchmark} · {line} → {run.run.folder}"


def background_line(task: str, background: Background) -> str:
    """One plain line for a background task that ended."""
    took = clock_text((background.ended or background.started) - background.started)
    if background.error is not None:
        return f"{task}: failed in its second process after {took}: {background.error}"
    return f"{task}: fitted in a second process ({took})"
