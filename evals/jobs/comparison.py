"""The main job's comparison: one benchmark's table rows picked from its test summaries (ReSo's runs, the
best and the cheapest near-best single model, the votes, the cascade, random and the oracle), and the JSON
file of every benchmark's table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reso.evals.method_kind import MethodKind


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
        chosen.append(("best single: " + s_model(best), best))
        cheap = _within(best, singles, 3.0)
        if cheap is not best:
            chosen.append(("cheapest single within 3 points: " + s_model(cheap), cheap))
    for prefix in ("vote:", "cascade:", "random", "oracle"):
        chosen += [(s.get("method_label", s["method"]), s) for s in summaries if s["method"].startswith(prefix)]
    reference = [s for _, s in chosen].index(best) if best is not None else 0
    return benchmark_rows(out, chosen, reference, singles, best_single=best is not None)


def s_model(summary: dict[str, Any]) -> str:
    return summary["method"].removeprefix("single:").split("/", 1)[0]


def write_comparison(out: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    path = out / "comparison.json"
    path.write_text(json.dumps(tables, indent=2), encoding="utf-8")
    return path
