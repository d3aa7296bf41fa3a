"""Uncertainty of evaluation figures: the Wilson interval of an accuracy, and paired bootstrap intervals of
the differences between runs scored on the same items.

A paired bootstrap resamples items, not runs: every run is re-scored on the same resampled items, so an
item that every method finds hard moves all of them together and the interval of a difference is as narrow
as the pairing allows. The statistics are vectorised over resamples with numpy; the resamples are drawn in
chunks so that memory stays bounded for large runs.
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
    """One run against the reference on the same items: accuracy difference and cost ratio, each with the
    percentile interval of its bootstrap distribution (None where the reference cost nothing)."""

    accuracy_diff: float
    accuracy_diff_ci95: list[float]
    cost_ratio: float | None
    cost_ratio_ci95: list[float] | None


def paired_bootstrap(correct: np.ndarray, cost: np.ndarray, reference: int = 0, *,
                     resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                     confidence: float = CONFIDENCE) -> list[PairedInterval]:
    """Paired bootstrap of every run (a row of `correct` and `cost`, items in columns, the same item in the
    same column) against row `reference`; one result per row, the reference's own included.

    Raises:
        ValueError: Mismatched shapes, no items, or fewer than one resample.
    """
    correct = np.asarray(correct, dtype=float)
    cost = np.asarray(cost, dtype=float)
    if correct.ndim != 2 or correct.shape != cost.shape:
        raise ValueError(f"correct and cost must be runs × items arrays of one shape, got {correct.shape} "
                         f"and {cost.shape}")
    runs, items = correct.shape
    if items == 0:
        raise ValueError("no items to resample")
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
    tails = [50 * (1 - confidence), 50 * (1 + confidence)]
    base_cost = float(cost[reference].sum())
    results = []
    for run in range(runs):
        diffs = accuracy[run] - accuracy[reference]
        ratio_ci = None
        if base_cost > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = spent[run] / spent[reference]
            # A resample of only free reference items has no ratio; it is left out, not counted as infinite.
            ratios = ratios[np.isfinite(ratios)]
            ratio_ci = [float(v) for v in np.percentile(ratios, tails)] if ratios.size else None
        results.append(PairedInterval(
            accuracy_diff=float(correct[run].mean() - correct[reference].mean()),
            accuracy_diff_ci95=[float(v) for v in np.percentile(diffs, tails)],
            cost_ratio=float(cost[run].sum()) / base_cost if base_cost > 0 else None,
            cost_ratio_ci95=ratio_ci,
        ))
    return results
