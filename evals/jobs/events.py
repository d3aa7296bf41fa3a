"""What the main job (`reso.evals.jobs.demo.run_demo`) reports while it runs: the benchmark and its phase, the
runs planned ahead, each run's start, items and end, and the CRM fitted in the background.

The job calls a `DemoProgress`; how it is shown is the caller's (`reso demo` draws a live display on a
terminal and a line per finished run elsewhere: `reso.evals.cli.demo_progress`). `LogProgress` turns the
events into the plain lines a `log` callable received before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# The phases of one benchmark, in the order they come.
TRAINING = "training ReSo"
BASELINES = "testing the baselines"
WAITING_FOR_CRM = "waiting for the general CRM"
FITTING_CRM = "fitting the CRM"
TESTING_RESO = "testing ReSo"
PHASES = (TRAINING, BASELINES, WAITING_FOR_CRM, FITTING_CRM, TESTING_RESO)
FITS = (FITTING_CRM,)
"""The phases whose work is a fit rather than runs of items (the CRM, the question skills, the fine stage's
validation): how long one takes is known once one has been timed."""

Log = Callable[[str], None]
"""Where a plain line of progress goes (`print` by default)."""

GENERAL_CRM = "general CRM"
"""The background task's name: the small CRM fitted in a second process
(`reso.evals.jobs.crm_background.general_crm_in_background`)."""


@dataclass(frozen=True)
class PlannedRun:
    """A run the benchmark will make: its folder (unique within the benchmark), its label in the tables,
    train or test, its items, and how many of them its folder holds already (a resumed run skips them)."""

    folder: str
    label: str
    mode: str
    items: int
    done: int = 0


@dataclass(frozen=True)
class RunStart:
    """A run about to answer its items; `done` of them (right: `correct`, costing `cost_usd`) are in its
    folder already and will not run again."""

    benchmark: str
    label: str
    dataset: str
    mode: str
    folder: Path
    items: int
    done: int = 0
    correct: int = 0
    cost_usd: float = 0.0


class DemoProgress(Protocol):
    """Receives the job's progress. `item_done` comes once per item answered now (not the resumed ones), from
    the thread running the job; `background` may come from another thread."""

    def plan(self, benchmark: str, runs: Sequence[PlannedRun]) -> None:
        """The runs of `benchmark`, all of them in order; sent for every benchmark of the job before the first
        starts (in the job's order), and again when training settles which baselines its record allows."""

    def start_phase(self, benchmark: str, phase: str) -> None:
        """`benchmark` (its title) enters `phase` (one of `PHASES`, in their order; a benchmark without a general
        CRM to wait for skips `WAITING_FOR_CRM`)."""

    def run_started(self, run: RunStart) -> None: ...

    def item_done(self, row: dict[str, Any]) -> None:
        """One item of the current run answered: its results.jsonl row."""

    def run_finished(self, run: RunStart, summary: dict[str, Any]) -> None:
        """The run ended (its report written); `summary` is its summary.json."""

    def background(self, task: str, running: bool, error: str | None = None) -> None:
        """A task in another process started (`running`) or ended, with `error` when it failed."""

    def note(self, line: str) -> None:
        """Something worth a line of its own (a baseline left out, the CRM fitted)."""


class LogProgress:
    """The events as the lines a `log` callable gets: a line as each run starts, and the notes."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def plan(self, benchmark: str, runs: Sequence[PlannedRun]) -> None:
        pass

    def start_phase(self, benchmark: str, phase: str) -> None:
        pass

    def run_started(self, run: RunStart) -> None:
        self.log(f"{run.label} on {run.dataset} ({run.mode}, {run.items} items) → {run.folder}")

    def item_done(self, row: dict[str, Any]) -> None:
        pass

    def run_finished(self, run: RunStart, summary: dict[str, Any]) -> None:
        pass

    def background(self, task: str, running: bool, error: str | None = None) -> None:
        if running:
            self.log(f"{task}: fitting in a second process")

    def note(self, line: str) -> None:
        self.log(line)
