"""The frontier of finished runs: ReSo's accuracy–cost hull against the single models' hull, with intervals.

`frontier(runs)` places every run on the items all of them share, builds ReSo's hull (the runs of the method
`reso` along the budget knob: those whose settings differ in nothing but `answer_value_usd`, the largest such
group; `knob_runs`) and the single models' hull (every `single:` run), and
computes the figures of `reso.evals.reports.hull` (mean gain over a decade of budgets below the best single
model's cost, worst gap, QNC, share of the best-single-to-oracle gap closed). Votes, cascades and the other
baselines are shown as points; the oracle's accuracy bounds the gap.

Each figure's interval comes from the delta method: the figure is a function of the runs' mean accuracies and
mean costs, so its error is, to first order, the mean of an item term (the gradient, taken numerically at the
estimates, times each item's deviation from the means). That term's variance is the cluster-robust one by
source question where the items share questions (`reso.evals.reports.shared_questions`), and the plain
variance of independent items where they do not: the same estimator, with every item its own cluster, so
one interval method serves every figure. Which runs make each hull, which single model is best and where the
worst gap lies are held at their estimates (the intervals are conditional on them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from reso.evals.datasets import Problem
from reso.evals.method_kind import MethodKind
from reso.evals.reports.clusters import dataset_items, resampling
from reso.evals.reports.compare import CompareError, Run, load_run, shared_ids
from reso.evals.reports.hull import Figures, Hull, figures, upper_hull
from reso.evals.reports.run_labels import method_kind, run_labels
from reso.evals.reports.shared_questions import incidence, mean_variance
from reso.evals.reports.stats import CONFIDENCE

__all__ = ["Estimate", "Frontier", "FrontierPoint", "frontier", "frontier_of_folders"]

INDEPENDENT_ITEMS = "delta method, items taken as independent (no source question shared or named)"
_STEP = 1e-6


@dataclass(frozen=True)
class FrontierPoint:
    """One run on the frontier's items."""

    label: str
    kind: str
    folder: str
    cost_per_item_usd: float
    cost_usd: float
    accuracy: float
    accuracy_ci95: list[float]
    in_router_hull: bool = False
    """Whether the run is one of those ReSo's hull is made of."""


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95 % interval (None where the figure is undefined)."""

    value: float | None
    ci95: list[float] | None = None


@dataclass(frozen=True)
class Frontier:
    """ReSo's hull against the single models' on the shared items, with the figures and their intervals."""

    items: int
    interval_method: str
    best_single: str
    best_single_cost_usd: float
    """The best single model's USD per item: the budgets are read against it."""
    points: list[FrontierPoint]
    reso_hull: list[tuple[float, float]]
    single_hull: list[tuple[float, float]]
    budgets: list[float]
    """USD per item."""
    reso_at: list[float]
    single_at: list[float]
    mean_gain: Estimate
    worst_gap: Estimate
    worst_budget: float
    qnc: Estimate
    gap_closed: Estimate
    oracle: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Frontier:
        """A frontier as `to_json` wrote it."""
        fields = dict(data)
        fields["points"] = [FrontierPoint(**point) for point in data["points"]]
        for name in ("mean_gain", "worst_gap", "qnc", "gap_closed"):
            fields[name] = Estimate(**data[name])
        for name in ("reso_hull", "single_hull"):
            fields[name] = [tuple(vertex) for vertex in data[name]]
        return cls(**fields)


def _hull(values: np.ndarray, members: Sequence[int]) -> Hull:
    """The hull of the runs `members` from a vector of every run's accuracy, then every run's cost."""
    count = len(values) // 2
    chosen = list(members)
    return upper_hull(values[count:][chosen].tolist(), values[:count][chosen].tolist())


def _figure_functions(router: Sequence[int], singles: Sequence[int], best: int, oracle: int | None,
                      worst: int) -> dict[str, Callable[[np.ndarray], float | None]]:
    """Each figure as a function of the runs' accuracies then costs, with the best single model, the oracle
    and the budget of the worst gap held where the estimates put them."""
    def read(values: np.ndarray) -> tuple[Figures, Hull]:
        count = len(values) // 2
        reso = _hull(values, router)
        found = figures(reso, _hull(values, singles), float(values[count + best]), float(values[best]),
                        float(values[oracle]) if oracle is not None else None)
        return found, reso

    return {
        "mean_gain": lambda v: read(v)[0].mean_gain,
        "worst_gap": lambda v: read(v)[0].gains[worst],
        "qnc": lambda v: read(v)[0].qnc,
        "gap_closed": lambda v: read(v)[0].gap_closed,
    }


def _gradient(function: Callable[[np.ndarray], float | None], at: np.ndarray) -> np.ndarray | None:
    """Central differences of `function` at `at` (None where the figure is undefined nearby)."""
    gradient = np.zeros_like(at)
    for j in range(at.size):
        step = _STEP * max(1.0, abs(at[j]))
        up, down = at.copy(), at.copy()
        up[j] += step
        down[j] -= step
        high, low = function(up), function(down)
        if high is None or low is None:
            return None
        gradient[j] = (high - low) / (2 * step)
    return gradient


def _estimate(function: Callable[[np.ndarray], float | None], means: np.ndarray, deviations: np.ndarray,
              variance: Callable[[np.ndarray], float], z: float) -> Estimate:
    """The figure at the means, with the delta method's interval (`deviations`: items × (runs' accuracy
    then cost) deviations from the means)."""
    value = function(means)
    if value is None:
        return Estimate(None)
    gradient = _gradient(function, means)
    if gradient is None:
        return Estimate(float(value))
    half = z * variance(deviations @ gradient) ** 0.5
    return Estimate(float(value), [float(value - half), float(value + half)])


KNOB = "answer_value_usd"
"""The budget knob: ReSo's hull is made of runs that differ in this setting alone."""
_NOT_SETTINGS = frozenset({KNOB, "db"})


def knob_runs(summaries: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Which runs make ReSo's hull: of the ReSo runs grouped by their settings but the budget knob (and the
    DADB's path), the largest group, the one holding the first ReSo run on a tie. The other ReSo runs (another
    fine stage, the paper's fixed k) are other methods, shown as points."""
    groups: dict[str, list[int]] = {}
    for r, summary in enumerate(summaries):
        if method_kind(str(summary["method"])) == MethodKind.RESO:
            settings = {key: value for key, value in (summary.get("settings") or {}).items()
                        if key not in _NOT_SETTINGS}
            groups.setdefault(repr(sorted(settings.items())), []).append(r)
    chosen = max(groups.values(), key=lambda members: (len(members), -members[0]), default=[])
    return [r in chosen for r in range(len(summaries))]


def frontier(runs: Sequence[Run], problems: Mapping[str, Problem] | None = None,
             confidence: float = CONFIDENCE, router: Sequence[bool] | None = None) -> Frontier:
    """The frontier of `runs` on the items all of them share (see the module docstring). `router` says, run by
    run, which make ReSo's hull (default: `knob_runs`; the others are shown as points).

    Raises:
        CompareError: No item shared by all runs, no ReSo run, or no single-model run that costs something.
    """
    ids = shared_ids(runs)
    if not ids:
        raise CompareError("no item id is shared by all the runs; a frontier compares runs over the same dataset")
    kinds = [str(method_kind(str(run.summary["method"]))) for run in runs]
    if router is None:
        router = knob_runs([run.summary for run in runs])
    hull_runs = [r for r, kind in enumerate(kinds) if kind == MethodKind.RESO and router[r]]
    if not hull_runs:
        raise CompareError("no ReSo run among the folders (a `reso eval --method reso` run, or `reso demo`'s "
                           "test-reso*)")
    correct = np.array([[float(bool(run.rows[i]["correct"])) for i in ids] for run in runs])
    cost = np.array([[float(run.rows[i]["usage"].get("cost_usd", 0.0)) for i in ids] for run in runs])
    accuracies, costs = correct.mean(axis=1), cost.mean(axis=1)
    singles = [r for r, kind in enumerate(kinds) if kind == MethodKind.SINGLE and costs[r] > 0]
    if not singles:
        raise CompareError("no single-model run that costs something: the frontier reads budgets against the best")
    best = max(singles, key=lambda r: (accuracies[r], -costs[r]))
    oracles = [r for r, kind in enumerate(kinds) if kind == MethodKind.ORACLE]
    oracle = oracles[0] if oracles else None
    if problems is None:
        problems = dataset_items(run.summary for run in runs)
    plan = resampling(problems, ids)
    pairs = incidence(plan.clusters if plan.clusters is not None else [(i,) for i in ids])
    z = NormalDist().inv_cdf(0.5 + confidence / 2)

    def variance(residuals: np.ndarray) -> float:
        return mean_variance(pairs, residuals)

    labels = run_labels([run.summary for run in runs])
    points = [FrontierPoint(label, kind, str(run.folder), float(costs[r]), float(cost[r].sum()), float(accuracies[r]),
                            _accuracy_interval(correct[r], variance, z), r in hull_runs)
              for r, (run, label, kind) in enumerate(zip(runs, labels, kinds, strict=True))]
    means = np.concatenate([accuracies, costs])
    single_runs = [r for r, kind in enumerate(kinds) if kind == MethodKind.SINGLE]
    reso, single = _hull(means, hull_runs), _hull(means, single_runs)
    found = figures(reso, single, float(costs[best]), float(accuracies[best]),
                    float(accuracies[oracle]) if oracle is not None else None)
    worst = found.gains.index(found.worst_gap)
    deviations = np.concatenate([correct - accuracies[:, None], cost - costs[:, None]]).T
    functions = _figure_functions(hull_runs, single_runs, best, oracle, worst)
    estimates = {name: _estimate(f, means, deviations, variance, z) for name, f in functions.items()}
    return Frontier(
        items=len(ids), interval_method=f"delta method, {plan.method}" if plan.clusters is not None else INDEPENDENT_ITEMS,
        best_single=labels[best], best_single_cost_usd=float(costs[best]), points=points,
        reso_hull=list(zip(reso.costs, reso.accuracies, strict=True)),
        single_hull=list(zip(single.costs, single.accuracies, strict=True)),
        budgets=found.budgets, reso_at=[reso.at(b) for b in found.budgets],
        single_at=[single.at(b) for b in found.budgets], mean_gain=estimates["mean_gain"],
        worst_gap=estimates["worst_gap"], worst_budget=found.worst_budget, qnc=estimates["qnc"],
        gap_closed=estimates["gap_closed"], oracle=labels[oracle] if oracle is not None else None)


def _accuracy_interval(right: np.ndarray, variance: Callable[[np.ndarray], float], z: float) -> list[float]:
    accuracy = float(right.mean())
    half = z * variance(right - accuracy) ** 0.5
    return [max(0.0, accuracy - half), min(1.0, accuracy + half)]


def frontier_of_folders(folders: Sequence[Path], router: Callable[[Path], bool] | None = None) -> Frontier:
    """The frontier of the runs in `folders` (each a `reso eval` output folder); `router` says which folders
    make ReSo's hull (default: `knob_runs`).

    Raises:
        CompareError: A folder that is not a finished run, or runs that make no frontier.
    """
    runs = [load_run(Path(folder)) for folder in folders]
    return frontier(runs, router=None if router is None else [router(run.folder) for run in runs])

