"""The frontier written for people and files: `frontier.json`, the picture with both hulls (`frontier.png`),
and the figures in words (`frontier_lines`), for `reso frontier` and the main job alike."""

from __future__ import annotations

import json
from pathlib import Path

from reso.evals.reports.delta import Estimate
from reso.evals.reports.formatting import estimate_text
from reso.evals.reports.frontier import Frontier
from reso.evals.reports.hull_versus import Versus
from reso.evals.reports.table_labels import BEST_SINGLE, GAP_CLOSED, MEAN_GAIN, QNC, WORST_GAP

__all__ = ["FRONTIER_JSON", "FRONTIER_PLOT", "frontier_lines", "versus_lines", "write_frontier"]

FRONTIER_JSON = "frontier.json"
FRONTIER_PLOT = "frontier.png"


def write_frontier(out: Path, found: Frontier, title: str) -> list[str]:
    """Write `frontier.json` and the picture (`frontier.png`) into `out`; returns their paths."""
    from reso.evals.reports.cost_plot import CostPoint, plot_accuracy_cost

    out.mkdir(parents=True, exist_ok=True)
    points = [CostPoint(p.label, p.kind, p.cost_per_item_usd, p.accuracy, p.accuracy_ci95) for p in found.points]
    plot = out / FRONTIER_PLOT
    plot_accuracy_cost(points, plot, title=title,
                       hulls={"single": found.single_hull, "reso": found.reso_hull})
    data = out / FRONTIER_JSON
    data.write_text(json.dumps(found.to_json(), indent=2), encoding="utf-8")
    return [str(data), str(plot)]


def _points(value: Estimate, scale: float = 100.0, signed: bool = True, unit: str = " points",
            digits: int = 1, missing: str = "n/a") -> str:
    return estimate_text(value.value, value.ci95, scale, signed, unit, digits, missing)


def frontier_lines(found: Frontier, unit: str = "item") -> list[str]:
    """The figures in words, one a line (for terminals and logs), each named as the documentation's table
    names it (`reso.evals.reports.table_labels`); `unit`: what an item is."""
    best = found.best_single.removeprefix("single:")
    qnc = found.qnc
    qnc_text = ("not reached: ReSo's hull stays below its accuracy" if qnc.value is None else
                f"{qnc.value:.2f}× its cost" + (f" [{qnc.ci95[0]:.2f}, {qnc.ci95[1]:.2f}]" if qnc.ci95 else ""))
    lines = [
        f"{BEST_SINGLE}: {best}, ${found.best_single_cost_usd:.4f} per {unit}",
        f"{MEAN_GAIN}, nine budgets from a tenth of its cost to its cost: {_points(found.mean_gain)}",
        f"{WORST_GAP}: {_points(found.worst_gap)} at ${found.worst_budget:.4f} per {unit}",
        f"{QNC} (ReSo's hull first reaches {best}'s accuracy at): {qnc_text}",
    ]
    if found.oracle is not None:
        lines.append(f"{GAP_CLOSED}, from {best}'s accuracy: {_points(found.gap_closed, unit=' %')}")
    lines.append(f"95 % intervals: {found.interval_method}")
    return lines


def versus_lines(found: Versus) -> list[str]:
    """Two routers' hulls against each other in words, one figure a line."""
    best = found.best_single.removeprefix("single:")

    def qnc(estimate: Estimate) -> str:
        return _points(estimate, scale=1.0, unit="×", signed=False, digits=2, missing="not reached")

    return [
        f"budgets: nine from a tenth of {best}'s cost (${found.best_single_cost_usd:.4f} per item) to it",
        "the second router's hull less the first's, mean over the budgets: " + _points(found.mean_difference),
        f"the lowest difference: {_points(found.worst_difference)} at ${found.worst_budget:.4f} per item",
        f"QNC against {best}: the first {qnc(found.base_qnc)}, the second {qnc(found.other_qnc)}, difference "
        + _points(found.qnc_difference, scale=1.0, unit="", digits=2),
        f"95 % intervals: {found.interval_method}",
    ]
