"""Uncertainty of evaluation figures: the Wilson interval of an accuracy, and the paired bootstrap intervals
of the differences between runs scored on the same independent items.

A paired bootstrap resamples items, not runs: every run is re-scored on the same resampled items, so an
item that every method finds hard moves all of them together and the interval of a difference is as narrow
as the pairing allows.

It assumes the items are independent. Composites that share source questions are not (the 100 MATH test
composites use 86 questions in 300 places), and resampling them one by one gives intervals that are too
narrow; their intervals come from the cluster-robust variance by source question instead
(`reso.evals.reports.shared_questions`).

The statistics are vectorised over resamples with numpy; the resamples are drawn in chunks so that memory
stays bounded for large runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2000
# Items × resamples drawn at once: bounds memory (8 bytes each) for runs of many thousand items.
_CHUNK_CELLS = 1 << 20


def wilson_interval(correct: int, n: int, confidence: float = CONFIDENCE) -> list[float] | None:
    """The Wilson score interval of `correct` successes out of `n` as [lo, hi]; None when `n` is 0."""
    if n <= 0:
        return None
    from scipy.stats import binomtest

    interval = binomtest(int(correct), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return [float(interval.low), float(interval.high)]


@dataclass(frozen=True)
class PairedInterval:
    """One run against the reference on the same items: accuracy difference and cost ratio, each with its
    95 % interval, and the run's own accuracy interval from the same method: percentiles of the paired
    bootstrap (`paired_bootstrap`), or normal intervals from the cluster-robust variance where items share
    source questions (`reso.evals.reports.shared_questions`). The ratio and its interval are None where the
    reference cost nothing."""

    accuracy_diff: float
    accuracy_diff_ci95: list[float] | None
    cost_ratio: float | None
    cost_ratio_ci95: list[float] | None
    accuracy_ci95: list[float] | None = None


def _percentiles(values: np.ndarray, confidence: float) -> list[float] | None:
    """The central `confidence` percentile interval of the finite values (None when there are none)."""
    values = values[np.isfinite(values)]
    if not values.size:
        return None
    return [float(v) for v in np.percentile(values, [50 * (1 - confidence), 50 * (1 + confidence)])]


def paired_bootstrap(correct: np.ndarray, cost: np.ndarray, reference: int = 0, *,
                     resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                     confidence: float = CONFIDENCE) -> list[PairedInterval]:
    """Paired bootstrap of every run (a row of `correct` and `cost`, items in columns, the same item in the
    same column) against row `reference`; one result per row, the reference's own included. A resample whose
    reference cost nothing is left out of the cost ratio's interval.

    Raises:
        ValueError: Mismatched shapes, no items, or fewer than one resample.
    """
    correct, cost = paired_arrays(correct, cost)
    runs, items = correct.shape
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    accuracy = np.empty((runs, resamples))
    spent = np.empty((runs, resamples))
    chunk = max(1, _CHUNK_CELLS // items)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        picks = rng.integers(0, items, size=(stop - start, items))  # the same items for every run
        for run in range(runs):
            accuracy[run, start:stop] = correct[run][picks].mean(axis=1)
            spent[run, start:stop] = cost[run][picks].sum(axis=1)
    base_cost = float(cost[reference].sum())
    results = []
    for run in range(runs):
        ratio_ci = None
        if base_cost > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                # A resample of only free reference items has no ratio; it is left out, not counted as infinite.
                ratio_ci = _percentiles(spent[run] / spent[reference], confidence)
        results.append(PairedInterval(
            accuracy_diff=float(correct[run].mean() - correct[reference].mean()),
            accuracy_diff_ci95=_percentiles(accuracy[run] - accuracy[reference], confidence),
            cost_ratio=float(cost[run].sum()) / base_cost if base_cost > 0 else None,
            cost_ratio_ci95=ratio_ci,
            accuracy_ci95=_percentiles(accuracy[run], confidence),
        ))
    return results


def paired_arrays(correct: np.ndarray, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`correct` and `cost` as float runs × items arrays, checked to be of one shape with some items.

    Raises:
        ValueError: Mismatched shapes or no items.
    """
    correct = np.asarray(correct, dtype=float)
    cost = np.asarray(cost, dtype=float)
    if correct.ndim != 2 or correct.shape != cost.shape:
        raise ValueError(f"correct and cost must be runs × items arrays of one shape, got {correct.shape} "
                         f"and {cost.shape}")
    if correct.shape[1] == 0:
        raise ValueError("no items to resample")
    return correct, cost
