"""The accuracy–cost hull of a set of runs, and the figures that compare a router's hull with its members'.

A run is a point (USD per item, accuracy). Mixing runs at random, item by item, reaches every point between
them: at a budget of c USD per item, a set of runs reaches the best accuracy of any mix whose expected cost is
at most c. That is the set's **upper hull**: concave and non-decreasing from its cheapest point on, flat after
its most accurate point. Below its cheapest point a set reaches nothing and counts 0 (a router that cannot go
that cheap gains nothing there, and neither does the single models' mix).

A router is worth something only where its hull lies above the hull of the single models it routes between
(RouterBench's AIQ, RouteLLM's APGR, UniRoute's QNC read the same picture). The figures (`Figures`):

- **budgets**: nine costs, log-spaced from a tenth of the best single model's cost to its cost (a decade of
  budgets below the strongest model, which is what a router is for);
- **mean gain**: the router's hull less the single models' hull, averaged over those budgets (points);
- **worst gap**: the lowest of those nine differences, and where it is;
- **QNC**: the cost at which the router's hull first reaches the best single model's accuracy, as a share of
  that model's cost (None when it never does);
- **gap closed**: at the best single model's cost, the share of the distance from its accuracy to the
  oracle's that the router's hull covers (None without an oracle, or when the oracle is no better).

The best single model is the most accurate one (the cheaper on a tie). Everything here is a plain function of
the points; the intervals of the figures (`reso.evals.reports.frontier`) come from differentiating these
functions.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BUDGETS", "Figures", "Hull", "budgets_below", "figures", "upper_hull"]

BUDGETS = 9
"""How many budgets the mean gain and the worst gap read, from a tenth of the best model's cost to its cost."""
_DECADE = 10.0


@dataclass(frozen=True)
class Hull:
    """An upper hull: its vertices, cheapest first, accuracy rising (see the module docstring)."""

    costs: tuple[float, ...]
    accuracies: tuple[float, ...]

    def at(self, budget: float) -> float:
        """The accuracy the hull reaches at `budget` USD per item (0 below its cheapest vertex)."""
        if not self.costs or budget < self.costs[0]:
            return 0.0
        i = bisect.bisect_right(self.costs, budget)
        if i >= len(self.costs):
            return self.accuracies[-1]
        c0, c1 = self.costs[i - 1], self.costs[i]
        a0, a1 = self.accuracies[i - 1], self.accuracies[i]
        return a0 + (a1 - a0) * (budget - c0) / (c1 - c0)

    def first_reaching(self, accuracy: float) -> float | None:
        """The least budget at which the hull reaches `accuracy` (None when it never does)."""
        for i, reached in enumerate(self.accuracies):
            if reached >= accuracy:
                if i == 0:
                    return self.costs[0]
                c0, c1 = self.costs[i - 1], self.costs[i]
                a0 = self.accuracies[i - 1]
                return c0 + (c1 - c0) * (accuracy - a0) / (reached - a0)
        return None


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def upper_hull(costs: Sequence[float], accuracies: Sequence[float]) -> Hull:
    """The upper hull of the points (`costs[i]`, `accuracies[i]`): the concave majorant from the cheapest point
    (the most accurate of the cheapest) to the most accurate point (the cheapest of the most accurate).

    Written here rather than taken from scipy's ConvexHull: that needs three points not on one line and
    returns the whole hull, while a router's sweep often has two points, or several at one cost.
    """
    if len(costs) != len(accuracies):
        raise ValueError(f"{len(costs)} costs for {len(accuracies)} accuracies")
    points = sorted({(float(c), float(a)) for c, a in zip(costs, accuracies, strict=True)},
                    key=lambda p: (p[0], -p[1]))
    if not points:
        return Hull((), ())
    top = max(a for _, a in points)
    # Past the first point of top accuracy the hull is flat: points there add nothing.
    last = next(i for i, (_, a) in enumerate(points) if a == top)
    chain: list[tuple[float, float]] = []
    for point in points[:last + 1]:
        if chain and point[0] == chain[-1][0]:
            continue  # the same cost and no more accurate than the point kept there
        while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) >= 0:
            chain.pop()
        chain.append(point)
    return Hull(tuple(c for c, _ in chain), tuple(a for _, a in chain))


def budgets_below(best_cost: float, count: int = BUDGETS) -> list[float]:
    """`count` costs, log-spaced from a tenth of `best_cost` to `best_cost` (both included)."""
    if best_cost <= 0:
        return []
    if count == 1:
        return [best_cost]
    return [best_cost * _DECADE ** (j / (count - 1) - 1.0) for j in range(count)]


@dataclass(frozen=True)
class Figures:
    """The frontier's figures at their point estimates (see the module docstring)."""

    budgets: list[float]
    gains: list[float]
    """The router's hull less the single models' at each budget (fractions, not points)."""
    mean_gain: float
    worst_gap: float
    worst_budget: float
    qnc: float | None
    gap_closed: float | None


def figures(router: Hull, singles: Hull, best_cost: float, best_accuracy: float,
            oracle_accuracy: float | None = None, count: int = BUDGETS) -> Figures:
    """The figures of `router` against `singles`, the best single model costing `best_cost` USD per item for
    `best_accuracy`; `oracle_accuracy` for the share of the gap closed.

    Raises:
        ValueError: The best single model cost nothing (there is no decade of budgets below it).
    """
    budgets = budgets_below(best_cost, count)
    if not budgets:
        raise ValueError(f"the best single model costs {best_cost} USD per item: no budgets below it")
    gains = [router.at(b) - singles.at(b) for b in budgets]
    worst = min(range(len(gains)), key=lambda j: (gains[j], j))
    reached = router.first_reaching(best_accuracy)
    qnc = reached / best_cost if reached is not None else None
    gap_closed = None
    if oracle_accuracy is not None and oracle_accuracy > best_accuracy:
        gap_closed = (router.at(best_cost) - best_accuracy) / (oracle_accuracy - best_accuracy)
    return Figures(budgets, gains, math.fsum(gains) / len(gains), gains[worst], budgets[worst], qnc, gap_closed)
