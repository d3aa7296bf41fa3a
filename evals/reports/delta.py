"""Intervals for any figure of several runs' mean accuracies and costs on shared items: the delta method with
the cluster-robust variance.

A figure read off runs (a hull's height at a budget, the budget at which it reaches an accuracy) is a function
f of the runs' mean accuracies and mean costs. To first order its error is the mean of one term per item, the
gradient of f (taken numerically at the estimates) times the item's deviations from those means; that term's
variance is the cluster-robust one by source question where the items share questions
(`reso.evals.reports.shared_questions`), and the plain variance of independent items where they do not (the
same estimator with every item its own cluster), so every figure gets one interval method. What f holds fixed
(which runs make a hull, where a worst gap lies) stays where the estimates put it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from reso.evals.datasets import Problem
from reso.evals.reports.clusters import dataset_items, resampling
from reso.evals.reports.compare import CompareError, Run, shared_ids
from reso.evals.reports.hull import Hull, upper_hull
from reso.evals.reports.shared_questions import incidence, mean_variance
from reso.evals.reports.stats import CONFIDENCE

__all__ = ["INDEPENDENT_ITEMS", "Estimate", "Figure", "Sample", "sample"]

INDEPENDENT_ITEMS = "delta method, items taken as independent (no source question shared or named)"
_STEP = 1e-6

Figure = Callable[[np.ndarray], float | None]
"""A figure as a function of every run's mean accuracy, then every run's mean cost (None: undefined)."""


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95 % interval (None where the figure is undefined)."""

    value: float | None
    ci95: list[float] | None = None


@dataclass(frozen=True)
class Sample:
    """Runs on the items they share: each run's right (1/0) and cost per item, and how items go together."""

    ids: list[str]
    correct: np.ndarray
    cost: np.ndarray
    interval_method: str
    z: float
    _variance: Callable[[np.ndarray], float]

    @property
    def accuracies(self) -> np.ndarray:
        return self.correct.mean(axis=1)

    @property
    def costs(self) -> np.ndarray:
        return self.cost.mean(axis=1)

    @property
    def means(self) -> np.ndarray:
        """Every run's mean accuracy, then every run's mean cost: what a `Figure` reads."""
        return np.concatenate([self.accuracies, self.costs])

    def hull(self, values: np.ndarray, members: Sequence[int]) -> Hull:
        """The hull of the runs `members`, from a `means`-shaped vector."""
        count = len(self.correct)
        chosen = list(members)
        return upper_hull(values[count:][chosen].tolist(), values[:count][chosen].tolist())

    def accuracy_interval(self, run: int) -> list[float]:
        """The 95 % interval of one run's accuracy, from the same variance."""
        right = self.correct[run]
        accuracy = float(right.mean())
        half = self.z * self._variance(right - accuracy) ** 0.5
        return [max(0.0, accuracy - half), min(1.0, accuracy + half)]

    def estimate(self, figure: Figure) -> Estimate:
        """The figure at the estimates, with the delta method's interval (module docstring)."""
        means = self.means
        value = figure(means)
        if value is None:
            return Estimate(None)
        gradient = _gradient(figure, means)
        if gradient is None:
            return Estimate(float(value))
        deviations = np.concatenate([self.correct - self.accuracies[:, None], self.cost - self.costs[:, None]]).T
        half = self.z * self._variance(deviations @ gradient) ** 0.5
        return Estimate(float(value), [float(value - half), float(value + half)])


def _gradient(figure: Figure, at: np.ndarray) -> np.ndarray | None:
    """Central differences of `figure` at `at` (None where it is undefined nearby)."""
    gradient = np.zeros_like(at)
    for j in range(at.size):
        # Relative to the coordinate: costs are fractions of a cent, accuracies fractions of one.
        step = _STEP * abs(at[j]) if at[j] != 0 else _STEP * 1e-3
        up, down = at.copy(), at.copy()
        up[j] += step
        down[j] -= step
        high, low = figure(up), figure(down)
        if high is None or low is None:
            return None
        gradient[j] = (high - low) / (2 * step)
    return gradient


def sample(runs: Sequence[Run], problems: Mapping[str, Problem] | None = None,
           confidence: float = CONFIDENCE) -> Sample:
    """`runs` on the items all of them share; the items' source questions from `problems` (default: the
    dataset the runs' summaries name, when it loads).

    Raises:
        CompareError: No item shared by all runs.
    """
    ids = shared_ids(runs)
    if not ids:
        raise CompareError("no item id is shared by all the runs; compare runs over the same dataset")
    correct = np.array([[float(bool(run.rows[i]["correct"])) for i in ids] for run in runs])
    cost = np.array([[float(run.rows[i]["usage"].get("cost_usd", 0.0)) for i in ids] for run in runs])
    if problems is None:
        problems = dataset_items([run.summary for run in runs], [run.folder for run in runs])
    plan = resampling(problems, ids)
    pairs = incidence(plan.clusters if plan.clusters is not None else [(i,) for i in ids])
    method = f"delta method, {plan.method}" if plan.clusters is not None else INDEPENDENT_ITEMS
    return Sample(ids, correct, cost, method, NormalDist().inv_cdf(0.5 + confidence / 2),
                  lambda residuals: mean_variance(pairs, residuals))
