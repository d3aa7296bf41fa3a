"""The rows of the main job's table for one benchmark (`reso demo`): each chosen run against the best single
model, on every test composite and on the complete ones, with the gain over the best single split by cause.

A replay model without a recording of a sub-question fails it at no cost, so over all composites a missing
recording counts as a mistake. Each headline is therefore also given on the complete items: the composites
of which every single-model run of the benchmark (every model of its pool alone) has a recording of every
sub-question (`reso.evals.reports.recordings`). Intervals come from `compare_runs`: cluster-robust by
source question where composites share them, else the bootstrap item by item (`interval_method` says
which).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reso.evals.reports.clusters import dataset_items
from reso.evals.reports.compare import Comparison, compare_runs, load_run, shared_ids
from reso.evals.reports.gain_causes import gain_by_cause
from reso.evals.reports.recordings import complete_items


def _figures(comparison: Comparison | None, index: int, suffix: str) -> dict[str, Any]:
    """A run's accuracy, cost and paired figures against the best single, each key ending in `suffix`."""
    stat = comparison.runs[index] if comparison is not None else None
    pair = stat.vs_reference if stat is not None else None
    return {f"accuracy{suffix}": stat.accuracy if stat else None,
            f"accuracy{suffix}_ci95": stat.accuracy_ci95 if stat else None,
            f"cost_usd{suffix}": stat.cost_usd if stat else None,
            f"cost_vs_best_single{suffix}": pair.cost_ratio if pair else None,
            f"cost_vs_best_single{suffix}_ci95": pair.cost_ratio_ci95 if pair else None,
            f"diff_vs_best_single{suffix}": pair.accuracy_diff if pair else None,
            f"diff_vs_best_single{suffix}_ci95": pair.accuracy_diff_ci95 if pair else None,
            f"interval_method{suffix}": comparison.interval_method if comparison is not None else None}


def benchmark_rows(out: Path, chosen: Sequence[tuple[str, Mapping[str, Any]]], reference: int,
                   singles: Sequence[Mapping[str, Any]], *, best_single: bool = True) -> list[dict[str, Any]]:
    """One row per `(label, summary)` of `chosen`, measured against `chosen[reference]` (the best single
    model, when `best_single`) on the items every chosen run has; `singles` are the summaries of every
    single-model run of the benchmark, whose recordings decide which items are complete. Run folders are
    `out/<summary["run"]>`."""
    runs = [load_run(out / summary["run"]) for _, summary in chosen]
    problems = dataset_items([run.summary for run in runs], [run.folder for run in runs])
    full = compare_runs(runs, reference, problems=problems)
    ids = shared_ids(runs)
    loaded = {run.folder.name: run for run in runs}
    single_runs = [loaded.get(s["run"]) or load_run(out / s["run"]) for s in singles]
    complete = complete_items(single_runs, problems, ids)
    on_complete = compare_runs(runs, reference, items=complete, problems=problems) if complete else None
    rows = []
    for index, ((label, summary), run, stat) in enumerate(zip(chosen, runs, full.runs, strict=True)):
        pair = stat.vs_reference
        rows.append({
            "method": label, "run": summary["run"], "n": stat.n, "accuracy": stat.accuracy,
            "accuracy_ci95": stat.accuracy_ci95, "cost_usd": stat.cost_usd, "tokens_per_item": stat.tokens_per_item,
            "cost_vs_best_single": pair.cost_ratio if pair else None,
            "diff_vs_best_single": pair.accuracy_diff if pair else None,
            "diff_vs_best_single_ci95": pair.accuracy_diff_ci95 if pair else None,
            "cost_vs_best_single_ci95": pair.cost_ratio_ci95 if pair else None,
            "interval_method": full.interval_method,
            "n_complete": len(complete),
            **_figures(on_complete, index, "_complete"),
            "gain_by_cause": gain_by_cause(run, runs[reference], ids, problems) if best_single else None,
        })
    return rows


def complete_share(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """How many of a table's items are complete, and how many it has."""
    return (int(rows[0]["n_complete"]), int(rows[0]["n"])) if rows else (0, 0)
