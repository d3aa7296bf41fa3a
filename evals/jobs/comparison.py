"""The main job's comparison: one benchmark's table rows picked from its test summaries (ReSo's runs, the
best single model on the test and the one with the best training record, the cheapest near-best single
model, the votes, the cascade, random and the oracle), the JSON file of every benchmark's table, and each
benchmark's frontier (ReSo's hull along the budget knob against the single models', `frontier.json` and
`frontier.png` beside its runs)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reso.evals.method_kind import MethodKind
from reso.graphs.team import Team


def _within(best: dict[str, Any], others: Sequence[dict[str, Any]], points: float) -> dict[str, Any]:
    """The cheapest run whose accuracy is within `points` of `best`'s."""
    close = [s for s in others if s["accuracy"] >= best["accuracy"] - points / 100]
    return min(close, key=lambda s: s["cost_usd"])


def comparison_rows(out: Path, summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table of one benchmark: ReSo's runs, the best single model, the cheapest single model within three
    points of it, vote, cascade, random and the oracle, each with its 95 % interval, its cost relative to the
    best single model, and the paired interval of its accuracy difference from the best single;
    each also on the complete items (every single model has a recording of every sub-question), with the
    gain over the best single split by cause (`reso.evals.reports.benchmark_table`)."""
    from reso.evals.reports.benchmark_table import benchmark_rows

    singles = [s for s in summaries if s["method"].startswith("single:")]
    best = max(singles, key=lambda s: (s["accuracy"], -s["cost_usd"])) if singles else None
    chosen: list[tuple[str, dict[str, Any]]] = []
    for s in summaries:
        if s["method"] == MethodKind.RESO:
            chosen.append((s.get("label", "reso"), s))
    if best is not None:
        on_training = next((s for s in singles if s.get(BEST_ON_TRAINING_KEY)), None)
        same = on_training is not None and on_training["method"] == best["method"]
        chosen.append((BEST_ON_TEST + s_model(best) + (ALSO_ON_TRAINING if same else ""), best))
        if on_training is not None and not same:
            chosen.append((BEST_ON_TRAINING + s_model(on_training), on_training))
        cheap = _within(best, singles, 3.0)
        if cheap is not best:
            chosen.append(("cheapest single within 3 points: " + s_model(cheap), cheap))
    for prefix in ("vote:", "cascade:", "random", "oracle"):
        chosen += [(s.get("method_label", s["method"]), s) for s in summaries if s["method"].startswith(prefix)]
    reference = [s for _, s in chosen].index(best) if best is not None else 0
    return benchmark_rows(out, chosen, reference, singles, best_single=best is not None)


BEST_ON_TEST = "best single model on the test (chosen with its labels): "
BEST_ON_TRAINING = "best single model on the training record: "
ALSO_ON_TRAINING = " (also the best training record)"
BEST_ON_TRAINING_KEY = "best_on_training"
"""Marks, in a test summary of the main job (in memory), the single model with the best training record."""


def mark_best_on_training(summaries: Sequence[dict[str, Any]], team: Team) -> list[dict[str, Any]]:
    """`summaries` with the single-model run of the model whose training record is best marked
    (`BEST_ON_TRAINING_KEY`); unmarked when the DADB has no record."""
    from reso.evals.methods import MethodError, best_recorded

    try:
        (agent,) = best_recorded(team, 1)
    except MethodError:
        return list(summaries)
    model = team.agent(agent).model.model_name
    marked = []
    for summary in summaries:
        if summary["method"].startswith("single:") and summary.get("method_label") == f"single:{model}":
            summary = {**summary, BEST_ON_TRAINING_KEY: True}
        marked.append(summary)
    return marked


def write_benchmark_frontier(out: Path, title: str) -> Path:
    """The benchmark's frontier over its test runs: ReSo's hull is made of the ReSo row and the sweep of the value
    of a right answer (`knob_runs`: the other ReSo settings are points beside it), as `reso frontier` reads
    the same folders; writes `frontier.json` and `frontier.png` into `out` and returns the JSON's path."""
    from reso.evals.reports.frontier import frontier_of_folders
    from reso.evals.reports.frontier_report import FRONTIER_JSON, write_frontier

    folders = sorted(p for p in out.glob("test-*") if (p / "summary.json").is_file())
    found = frontier_of_folders(folders)
    # Each run by its folder's name, beside the JSON: no path of this machine in a file meant to be shared.
    found = dataclasses.replace(found, points=[dataclasses.replace(point, folder=Path(point.folder).name)
                                               for point in found.points])
    write_frontier(out, found, f"{title}: ReSo along the budget knob ({found.items} test composites)")
    return out / FRONTIER_JSON


def s_model(summary: dict[str, Any]) -> str:
    return summary["method"].removeprefix("single:").split("/", 1)[0]


def write_comparison(out: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    path = out / "comparison.json"
    path.write_text(json.dumps(tables, indent=2), encoding="utf-8")
    return path
