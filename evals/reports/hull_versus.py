"""Two routers' hulls against each other on the same items: does a larger pool lower ReSo's frontier?

`versus(base, other)`: `base` holds a router's runs along the budget knob with the single models of its pool
(the budgets, nine log-spaced from a tenth of the best single model's cost to its cost, and the accuracy QNC
aims at come from base's best single model, as in `reso.evals.reports.frontier`); `other` holds another
router's runs along its knob on the same items (every recorded model, say). The figures: the mean, over the
nine budgets, of other's hull less base's (points), the lowest of those differences, and each router's QNC
against base's best single model and their difference, each with its delta-method interval
(`reso.evals.reports.delta`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from reso.evals.datasets import Problem
from reso.evals.reports.compare import CompareError, Run
from reso.evals.reports.delta import Estimate, Figure, sample
from reso.evals.reports.frontier import best_single, knob_runs
from reso.evals.reports.hull import budgets_below
from reso.evals.reports.run_labels import method_kind, run_labels

__all__ = ["Versus", "versus"]


@dataclass(frozen=True)
class Versus:
    """`other`'s hull against `base`'s at base's budgets (module docstring)."""

    items: int
    interval_method: str
    best_single: str
    best_single_cost_usd: float
    budgets: list[float]
    base_at: list[float]
    other_at: list[float]
    mean_difference: Estimate
    worst_difference: Estimate
    worst_budget: float
    base_qnc: Estimate
    other_qnc: Estimate
    qnc_difference: Estimate

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _router(runs: Sequence[Run], offset: int) -> list[int]:
    """The indices of the runs along `runs`' budget knob, counted from `offset`."""
    members = [offset + r for r, on in enumerate(knob_runs([run.summary for run in runs])) if on]
    if not members:
        raise CompareError("no ReSo run along the budget knob among the folders")
    return members


def versus(base: Sequence[Run], other: Sequence[Run], problems: Mapping[str, Problem] | None = None) -> Versus:
    """`other`'s ReSo hull against `base`'s on the items all runs share (module docstring).

    Raises:
        CompareError: No shared item, no ReSo run along the knob on either side, or no single model in `base`.
    """
    runs = [*base, *other]
    data = sample(runs, problems)
    kinds = [str(method_kind(str(run.summary["method"]))) for run in base]
    best = best_single(kinds, data.accuracies[: len(base)], data.costs[: len(base)])
    mine, theirs = _router(base, 0), _router(other, len(base))
    count = len(runs)
    budgets = budgets_below(float(data.costs[best]))

    def heights(values: np.ndarray, members: Sequence[int]) -> list[float]:
        hull = data.hull(values, members)
        return [hull.at(b * values[count + best] / data.costs[best]) for b in budgets]

    def differences(values: np.ndarray) -> list[float]:
        return [b - a for a, b in zip(heights(values, mine), heights(values, theirs), strict=True)]

    def qnc(members: Sequence[int]) -> Figure:
        def figure(values: np.ndarray) -> float | None:
            reached = data.hull(values, members).first_reaching(float(values[best]))
            return None if reached is None else reached / float(values[count + best])
        return figure

    found = differences(data.means)
    worst = min(range(len(found)), key=lambda j: (found[j], j))

    def qnc_difference(values: np.ndarray) -> float | None:
        a, b = qnc(mine)(values), qnc(theirs)(values)
        return None if a is None or b is None else b - a

    return Versus(
        items=len(data.ids), interval_method=data.interval_method,
        best_single=run_labels([run.summary for run in base])[best], best_single_cost_usd=float(data.costs[best]),
        budgets=budgets, base_at=heights(data.means, mine), other_at=heights(data.means, theirs),
        mean_difference=data.estimate(lambda v: float(np.mean(differences(v)))),
        worst_difference=data.estimate(lambda v: differences(v)[worst]), worst_budget=budgets[worst],
        base_qnc=data.estimate(qnc(mine)), other_qnc=data.estimate(qnc(theirs)),
        qnc_difference=data.estimate(qnc_difference))

