"""The frontier of finished runs: ReSo's accuracy–cost hull against the single models' hull, with intervals.

`frontier(runs)` places every run on the items all of them share, builds ReSo's hull (the runs of the method
`reso` along the budget knob: those whose settings differ in nothing but `answer_value_usd`, the largest such
group; `knob_runs`) and the single models' hull (every `single:` run), and
computes the figures of `reso.evals.reports.hull` (mean gain over a decade of budgets below the best single
model's cost, worst gap, QNC, share of the best-single-to-oracle gap closed). Votes, cascades and the other
baselines are shown as points; the oracle's accuracy bounds the gap.

Each figure's interval comes from the delta method with the cluster-robust variance
(`reso.evals.reports.delta`); which runs make each hull, which single model is best and where the worst gap
lies are held at their estimates (the intervals are conditional on them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reso.evals.datasets import Problem
from reso.evals.method_kind import MethodKind
from reso.evals.reports.compare import CompareError, Run, load_run
from reso.evals.reports.delta import Estimate, Figure, Sample, sample
from reso.evals.reports.hull import Figures, Hull, figures
from reso.evals.reports.run_labels import method_kind, run_labels
from reso.evals.reports.stats import CONFIDENCE

__all__ = ["Estimate", "Frontier", "FrontierPoint", "frontier", "frontier_of_folders", "knob_runs"]


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


def _figure_functions(data: Sample, router: Sequence[int], singles: Sequence[int], best: int,
                      oracle: int | None, worst: int) -> dict[str, Figure]:
    """Each figure as a function of the runs' accuracies then costs, with the best single model, the oracle
    and the budget of the worst gap held where the estimates put them."""
    count = len(data.correct)

    def read(values: np.ndarray) -> tuple[Figures, Hull]:
        reso = data.hull(values, router)
        found = figures(reso, data.hull(values, singles), float(values[count + best]), float(values[best]),
                        float(values[oracle]) if oracle is not None else None)
        return found, reso

    return {
        "mean_gain": lambda v: read(v)[0].mean_gain,
        "worst_gap": lambda v: read(v)[0].gains[worst],
        "qnc": lambda v: read(v)[0].qnc,
        "gap_closed": lambda v: read(v)[0].gap_closed,
    }


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
    run, which make the router's hull (default: `knob_runs`, ReSo's runs along the knob; given, runs of any
    kind, so that another router, a cascade along its threshold say, is read the same way; the others are
    shown as points).

    Raises:
        CompareError: No item shared by all runs, no ReSo run, or no single-model run that costs something.
    """
    data = sample(runs, problems, confidence)
    kinds = [str(method_kind(str(run.summary["method"]))) for run in runs]
    if router is None:
        router = knob_runs([run.summary for run in runs])
        hull_runs = [r for r, kind in enumerate(kinds) if kind == MethodKind.RESO and router[r]]
    else:
        if len(router) != len(runs):
            raise ValueError(f"router: {len(router)} flags for {len(runs)} runs")
        hull_runs = [r for r in range(len(runs)) if router[r]]
        if not hull_runs:
            raise CompareError("no run is flagged as the router's")
    if not hull_runs:
        raise CompareError("no ReSo run among the folders (a `reso eval --method reso` run, or `reso demo`'s "
                           "test-reso*)")
    accuracies, costs = data.accuracies, data.costs
    best = best_single(kinds, accuracies, costs)
    oracles = [r for r, kind in enumerate(kinds) if kind == MethodKind.ORACLE]
    oracle = oracles[0] if oracles else None
    labels = run_labels([run.summary for run in runs])
    points = [FrontierPoint(label, kind, str(run.folder), float(costs[r]), float(data.cost[r].sum()),
                            float(accuracies[r]), data.accuracy_interval(r), r in hull_runs)
              for r, (run, label, kind) in enumerate(zip(runs, labels, kinds, strict=True))]
    means = data.means
    single_runs = [r for r, kind in enumerate(kinds) if kind == MethodKind.SINGLE]
    reso, single = data.hull(means, hull_runs), data.hull(means, single_runs)
    found = figures(reso, single, float(costs[best]), float(accuracies[best]),
                    float(accuracies[oracle]) if oracle is not None else None)
    worst = found.gains.index(found.worst_gap)
    functions = _figure_functions(data, hull_runs, single_runs, best, oracle, worst)
    estimates = {name: data.estimate(f) for name, f in functions.items()}
    return Frontier(
        items=len(data.ids), interval_method=data.interval_method,
        best_single=labels[best], best_single_cost_usd=float(costs[best]), points=points,
        reso_hull=list(zip(reso.costs, reso.accuracies, strict=True)),
        single_hull=list(zip(single.costs, single.accuracies, strict=True)),
        budgets=found.budgets, reso_at=[reso.at(b) for b in found.budgets],
        single_at=[single.at(b) for b in found.budgets], mean_gain=estimates["mean_gain"],
        worst_gap=estimates["worst_gap"], worst_budget=found.worst_budget, qnc=estimates["qnc"],
        gap_closed=estimates["gap_closed"], oracle=labels[oracle] if oracle is not None else None)


def best_single(kinds: Sequence[str], accuracies: np.ndarray, costs: np.ndarray) -> int:
    """The most accurate single-model run that costs something (the cheaper on a tie).

    Raises:
        CompareError: There is none.
    """
    singles = [r for r, kind in enumerate(kinds) if kind == MethodKind.SINGLE and costs[r] > 0]
    if not singles:
        raise CompareError("no single-model run that costs something: the frontier reads budgets against the best")
    return max(singles, key=lambda r: (accuracies[r], -costs[r]))


def frontier_of_folders(folders: Sequence[Path], router: Callable[[Path], bool] | None = None) -> Frontier:
    """The frontier of the runs in `folders` (each a `reso eval` output folder); `router` says which folders
    make ReSo's hull (default: `knob_runs`).

    Raises:
        CompareError: A folder that is not a finished run, or runs that make no frontier.
    """
    runs = [load_run(Path(folder)) for folder in folders]
    return frontier(runs, router=None if router is None else [router(run.folder) for run in runs])

