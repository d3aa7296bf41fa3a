"""What `reso demo` has done so far and how long the rest should take: the state its displays draw
(`reso.evals.cli.demo_progress`), kept apart from the drawing so that it is checked without a terminal.

The job's ETA is its elapsed time plus what is left: every run planned for every benchmark (the job plans
them all before the first starts), each at its measured pace, and every phase's own work outside runs (the
CRM fits above all) at the time that phase took on an earlier benchmark, in proportion to the benchmarks'
items. What is known is never dropped: a phase running past its estimate adds to the elapsed time, not less
to what is left.

Paces come from the items answered now, never from resumed ones. A running run's pace is read from its
items since the first one came (a run's first item waits for its team to be built, which says nothing of
the rest); a run not started yet goes at the pace earlier runs of its kind had, whole runs counted: the same
method family in the same mode when one has run (a `single:` run after a `single:` run), else any run of
that mode. Without a pace for some run (the first benchmark's test runs, while it trains), a fit phase no
benchmark has timed yet, or while a task in another process runs (its end cannot be foreseen), the ETA is a
lower bound, and says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reso.evals.jobs.events import FITS, PHASES, WAITING_FOR_CRM, PlannedRun, RunStart


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
    first: float | None = None
    """When the first of them came."""


@dataclass
class PhaseTally:
    """The phase in progress, and the seconds of it its finished runs took."""

    benchmark: str
    name: str
    started: float
    in_runs: float = 0.0


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
    plans: dict[str, list[PlannedRun]] = field(default_factory=dict)
    """Every benchmark's runs, in the job's order."""
    finished: dict[tuple[str, str], int] = field(default_factory=dict)
    """Finished runs: (benchmark, folder name) → items its folder holds."""
    current: RunTally | None = None
    current_phase: PhaseTally | None = None
    background: dict[str, Background] = field(default_factory=dict)
    _paces: dict[str, tuple[float, int]] = field(default_factory=dict)
    """Seconds and items answered now, by mode and by `_kind`."""
    _phase_work: dict[str, tuple[float, int]] = field(default_factory=dict)
    """By phase: the seconds its finished instances spent outside runs, and their benchmarks' items."""

    @property
    def phase(self) -> str:
        """The phase in progress ('' before the first)."""
        return self.current_phase.name if self.current_phase is not None else ""

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def planned(self) -> list[PlannedRun]:
        """The current benchmark's runs."""
        return self.plans.get(self.benchmark, [])

    def plan(self, benchmark: str, runs: Sequence[PlannedRun]) -> None:
        self.plans[benchmark] = list(runs)
        self.benchmark = self.benchmark or benchmark

    def start_phase(self, benchmark: str, phase: str) -> None:
        now, ended = self.clock(), self.current_phase
        if ended is not None and ended.name != WAITING_FOR_CRM:  # a wait is the other process's time
            spent, items = self._phase_work.get(ended.name, (0.0, 0))
            self._phase_work[ended.name] = (spent + self._outside_runs(ended, now), items + self._size(ended.benchmark))
        self.benchmark = benchmark
        self.current_phase = PhaseTally(benchmark, phase, now)

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
        if current.first is None:
            current.first = self.clock()

    def run_finished(self, run: RunStart, summary: dict[str, Any]) -> RunTally:
        """Count the run as finished (its folder holds `summary["n"]` items) and return its tally."""
        current = self.current if self.current is not None and self.current.run == run else \
            RunTally(run, self.clock(), run.done, run.correct, run.cost_usd)
        seconds = self.clock() - current.started
        if current.live:
            for key in (run.mode, _kind(run.mode, run.label)):
                spent, items = self._paces.get(key, (0.0, 0))
                self._paces[key] = (spent + seconds, items + current.live)
        if self.current_phase is not None:
            self.current_phase.in_runs += seconds
        self.finished[(run.benchmark, run.folder.name)] = int(summary["n"])
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
        if current.live >= 2 and current.first is not None:
            return left * (self.clock() - current.first) / (current.live - 1)
        pace = self.seconds_per_item(current.run.mode, current.run.label)
        return None if pace is None else left * pace

    def _is_current(self, benchmark: str, planned: PlannedRun) -> bool:
        current = self.current
        return current is not None and current.run.benchmark == benchmark and current.run.folder.name == planned.folder

    def _size(self, benchmark: str) -> int:
        """A benchmark's items, all runs together: what a phase's work outside runs is scaled by."""
        return sum(planned.items for planned in self.plans.get(benchmark, []))

    def items(self, benchmarks: Sequence[str] | None = None) -> tuple[int, int]:
        """The items done (in finished runs, the current one and resumed runs to come) and all the runs' items,
        of the current benchmark or of `benchmarks`."""
        done = total = 0
        for benchmark in [self.benchmark] if benchmarks is None else benchmarks:
            for planned in self.plans.get(benchmark, []):
                total += planned.items
                if (benchmark, planned.folder) in self.finished:
                    done += self.finished[(benchmark, planned.folder)]
                elif self._is_current(benchmark, planned):
                    done += self.current.done if self.current is not None else 0
                else:
                    done += planned.done
        return done, total

    def runs(self) -> tuple[int, int]:
        """The current benchmark's runs finished, and planned."""
        return (sum((self.benchmark, planned.folder) in self.finished for planned in self.planned),
                len(self.planned))

    def _outside_runs(self, phase: PhaseTally, now: float) -> float:
        """The seconds `phase` has spent outside its runs up to `now`."""
        in_run = now - self.current.started if self.current is not None else 0.0
        return max(now - phase.started - phase.in_runs - in_run, 0.0)

    def phase_eta(self, benchmark: str | None = None, phase: str | None = None) -> float | None:
        """Seconds the work of `phase` outside its runs should still take on `benchmark` (default: the phase in
        progress): a fit phase no benchmark has timed yet is None (unknown); another phase, 0 until timed."""
        benchmark, phase = benchmark or self.benchmark, phase or self.phase
        expected: float | None = None if phase in FITS else 0.0
        if phase in self._phase_work:
            spent, items = self._phase_work[phase]
            expected = spent * self._size(benchmark) / items if items else spent
        running = self.current_phase
        if running is None or (running.benchmark, running.name) != (benchmark, phase) or expected is None:
            return expected
        return max(expected - self._outside_runs(running, self.clock()), 0.0)

    def _phases_left(self, benchmark: str) -> list[str]:
        """The phases of `benchmark` (the current one or one to come) in progress or to come, but the waits."""
        first = PHASES.index(self.phase) if benchmark == self.benchmark and self.phase in PHASES else 0
        return [phase for phase in PHASES[first:] if phase != WAITING_FOR_CRM]

    def _eta(self, benchmarks: Sequence[str]) -> tuple[float, bool]:
        """Seconds `benchmarks` (the current one and those to come) should still take, and whether that is all
        (module docstring)."""
        eta, known = 0.0, not any(task.ended is None for task in self.background.values())
        for benchmark in benchmarks:
            parts: list[float | None] = [self.phase_eta(benchmark, phase) for phase in self._phases_left(benchmark)]
            for planned in self.plans.get(benchmark, []):
                if (benchmark, planned.folder) in self.finished:
                    continue
                if self._is_current(benchmark, planned):
                    parts.append(self.run_eta())
                elif planned.items > planned.done:
                    pace = self.seconds_per_item(planned.mode, planned.label)
                    parts.append(None if pace is None else (planned.items - planned.done) * pace)
            eta += sum(part for part in parts if part is not None)
            known = known and None not in parts
        return eta, known

    def benchmark_eta(self) -> tuple[float, bool]:
        """Seconds the current benchmark should still take, and whether that is all it should take: a lower
        bound without a pace for some run or a time for some fit phase, or while a task in another process
        runs."""
        return self._eta([self.benchmark])

    def job_benchmarks(self) -> list[str]:
        """The benchmarks from the current one on."""
        order = list(self.plans)
        return order[order.index(self.benchmark):] if self.benchmark in order else order

    def job_eta(self) -> tuple[float, bool]:
        """Seconds the whole job should still take, and whether that is all (as `benchmark_eta`)."""
        return self._eta(self.job_benchmarks())

    def job_total(self) -> tuple[float, bool]:
        """The whole job's time: elapsed, plus what is left (`job_eta`)."""
        left, known = self.job_eta()
        return self.elapsed() + left, known

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


def total_text(total: tuple[float, bool]) -> str:
    """`m:ss in all`; `> m:ss in all` when that is a lower bound."""
    seconds, known = total
    return f"{'' if known else '> '}{clock_text(seconds)} in all"


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
