"""Comparing finished runs on the items they share: each run's accuracy with its interval, cost and tokens,
and against a reference run the paired intervals of the accuracy difference and of the cost ratio.

Where the items are composites that share source questions (named by the dataset a run's summary names,
`reso.evals.reports.clusters`), every interval is a normal one from the cluster-robust variance by source
question (`reso.evals.reports.shared_questions`), each run's accuracy interval included; otherwise the
paired bootstrap resamples items one by one and the accuracy interval is Wilson's
(`reso.evals.reports.stats`). The comparison says which (`Comparison.interval_method`).

Run folders are read, never written: no lock is taken, so a run still in progress can be compared as it
stands (its last line, if cut short, is left out, as a resume would).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from reso.evals.datasets import Problem
from reso.evals.reports.clusters import (
    CLUSTER_INTERVALS,
    CLUSTER_METHOD,
    NO_SOURCE_IDS,
    dataset_items,
    resampling,
)
from reso.evals.reports.run_labels import method_kind, run_labels
from reso.evals.reports.shared_questions import paired_cluster_robust
from reso.evals.reports.stats import DEFAULT_RESAMPLES, PairedInterval, paired_bootstrap, wilson_interval

# What a comparison reads from every results line.
_ROW_FIELDS = ("id", "correct", "usage")


class CompareError(ValueError):
    """Runs that cannot be compared: the message is one line naming the folder, file, line or field."""


@dataclass(frozen=True)
class Run:
    """A finished run as read from its folder: summary and result rows by item id."""

    folder: Path
    summary: dict[str, Any]
    rows: dict[str, dict[str, Any]]


def _summary(folder: Path) -> dict[str, Any]:
    path = folder / "summary.json"
    if not path.is_file():
        raise CompareError(f"{folder}: no summary.json (not the output folder of a `reso eval` run)")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CompareError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(summary, dict) or "method" not in summary:
        raise CompareError(f"{path}: field 'method': missing")
    return summary


def _result_rows(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / "results.jsonl"
    if not path.is_file():
        raise CompareError(f"{folder}: no results.jsonl (not the output folder of a `reso eval` run)")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise CompareError(f"{path}: not valid UTF-8 (byte 0x{error.object[error.start]:02x} at offset "
                           f"{error.start})") from None
    rows: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # the one line a crash can cut short
                continue
            raise CompareError(f"{path}:{number}: not a JSON object") from None
        missing = [key for key in _ROW_FIELDS if not isinstance(row, dict) or key not in row]
        if missing:
            raise CompareError(f"{path}:{number}: result row lacks field '{missing[0]}'")
        rows.setdefault(str(row["id"]), row)
    return rows


def load_run(folder: Path) -> Run:
    """Read a run folder.

    Raises:
        CompareError: Not a folder, or its summary or results are missing or unreadable.
    """
    if not folder.is_dir():
        raise CompareError(f"{folder}: not a folder")
    rows = _result_rows(folder)
    return Run(folder=folder, summary={**_summary(folder), "run": folder.name}, rows=rows)


def shared_ids(runs: Sequence[Run]) -> list[str]:
    """The item ids every run has, sorted: a run's rows are in the order its items finished, which
    concurrency changes from run to run, and the seeded bootstrap must resample the same items each time."""
    if not runs:
        return []
    return sorted(set.intersection(*(set(run.rows) for run in runs)))


@dataclass(frozen=True)
class RunStats:
    """One run's figures on the shared items (`items_in_run`: all the items the run has)."""

    folder: str
    method: str
    kind: str
    label: str
    n: int
    items_in_run: int
    correct: int
    accuracy: float
    accuracy_ci95: list[float] | None
    cost_usd: float
    cost_per_item_usd: float
    total_tokens: int
    tokens_per_item: float
    vs_reference: PairedInterval | None = None


@dataclass(frozen=True)
class Comparison:
    """Every run on the shared items, each against the reference run."""

    shared_items: int
    reference: str
    resamples: int
    """The bootstrap's resamples and seed; unused where the intervals are cluster-robust."""
    seed: int
    runs: list[RunStats]
    interval_method: str = NO_SOURCE_IDS
    """How the intervals were computed (`reso.evals.reports.clusters`): cluster-robust by source question, or
    the bootstrap by item and why."""
    source_questions: int | None = None
    """The distinct source questions of the compared items, where the dataset names them."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def intervals_text(self) -> str:
        """How the 95 % intervals were computed, in words: normal ones from the cluster-robust variance, or
        the paired bootstrap with its resamples and seed."""
        if self.interval_method == CLUSTER_METHOD:
            return CLUSTER_INTERVALS
        return f"paired {self.interval_method} ({self.resamples} resamples, seed {self.seed})"


def run_stats(run: Run, label: str, ids: Sequence[str]) -> RunStats:
    """A run's figures over the items `ids`."""
    rows = [run.rows[item] for item in ids]
    n = len(rows)
    correct = sum(1 for row in rows if row["correct"])
    cost = float(sum(row["usage"].get("cost_usd", 0.0) for row in rows))
    tokens = int(sum(row["usage"].get("total_tokens", 0) for row in rows))
    method = str(run.summary["method"])
    return RunStats(folder=str(run.folder), method=method, kind=method_kind(method), label=label, n=n,
                    items_in_run=len(run.rows), correct=correct, accuracy=correct / n if n else 0.0,
                    accuracy_ci95=wilson_interval(correct, n), cost_usd=cost,
                    cost_per_item_usd=cost / n if n else 0.0, total_tokens=tokens,
                    tokens_per_item=tokens / n if n else 0.0)


def compare_runs(runs: Sequence[Run], reference: int = 0, *, resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0, items: Sequence[str] | None = None,
                 problems: Mapping[str, Problem] | None = None) -> Comparison:
    """Compare `runs` on the items all of them have (only those of `items`, when given), each against
    `runs[reference]`. The items' source questions come from `problems` (default: the dataset the runs'
    summaries name, when it loads): where some is shared, the intervals are cluster-robust by source
    question, else the paired bootstrap's over `resamples` resamples drawn with `seed`.

    Raises:
        CompareError: No runs, or no item shared by all of them.
    """
    if not runs:
        raise CompareError("no run folders given")
    ids = shared_ids(runs)
    if items is not None:
        wanted = set(items)
        ids = [item for item in ids if item in wanted]
    if not ids:
        names = ", ".join(str(run.folder) for run in runs)
        raise CompareError(f"no item id is shared by all of {names}; compare runs over the same dataset")
    if problems is None:
        problems = dataset_items([run.summary for run in runs], [run.folder for run in runs])
    plan = resampling(problems, ids)
    correct = np.array([[bool(run.rows[item]["correct"]) for item in ids] for run in runs], dtype=float)
    cost = np.array([[float(run.rows[item]["usage"].get("cost_usd", 0.0)) for item in ids] for run in runs])
    if plan.clusters is not None:
        paired = paired_cluster_robust(correct, cost, reference, clusters=plan.clusters)
    else:
        paired = paired_bootstrap(correct, cost, reference, resamples=resamples, seed=seed)
    labels = run_labels([run.summary for run in runs])
    stats = []
    for run, label, pair in zip(runs, labels, paired, strict=True):
        stat = replace(run_stats(run, label, ids), vs_reference=pair)
        if plan.clusters is not None:  # the run's own interval, like its difference's, counts shared questions
            stat = replace(stat, accuracy_ci95=pair.accuracy_ci95)
        stats.append(stat)
    return Comparison(shared_items=len(ids), reference=str(runs[reference].folder), resamples=resamples,
                      seed=seed, runs=stats, interval_method=plan.method, source_questions=plan.source_questions)
