"""Synthetic verifiers of a set quality: what a bench reads to say how good a verifier would have to be.

A verifier here judges answers whose rightness is known: a signal of 1 for a right answer, 0 for a wrong one,
plus Gaussian noise, one draw per answer, scaled by bisection until the AUC on these very answers is the
target; its verdict is the signal's log-likelihood ratio. AUC 1 is a perfect verifier; 0.5 would be a coin.
`reso bench ceiling` and `reso bench judge` use it to find the AUC a bar needs, beside the AUC of the real
scorers (`measured_auc`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from statistics import NormalDist
from typing import TypeVar

import numpy as np

__all__ = ["Key", "VerifierQualityError", "measured_auc", "synthetic_verifier"]


Key = TypeVar("Key", bound=Hashable)
"""What identifies an answer: a question id, or (question, model)."""


class VerifierQualityError(ValueError):
    """A target AUC outside (0.5, 1]."""


CERTAIN = 30.0
"""The log-likelihood ratio a perfect verifier gives: a right answer +30, a wrong one −30."""


def synthetic_verifier(right: Mapping[Key, bool], auc: float, seed: int = 0) -> dict[Key, float]:
    """A verdict per answer whose rightness is `right`, with the AUC `auc` on these answers (to the nearest
    the draws allow): the answer's signal is 1 or 0 plus Gaussian noise of spread σ, one draw per answer, and
    the verdict is that signal's log-likelihood ratio (s − ½) / σ² (±`CERTAIN` for a perfect one), so that
    verdicts on agreeing answers add up as independent evidence. The draws depend on `seed` alone, so
    verifiers of several AUCs differ only in the noise's scale: a better one is the same verifier with less
    noise."""
    if not 0.5 < auc <= 1.0:
        raise VerifierQualityError(f"each AUC must be above 0.5 and at most 1, got {auc}")
    ids = sorted(right, key=str)  # each answer's draw does not depend on the caller's order
    labels = np.array([float(right[key]) for key in ids])
    noise = np.random.default_rng(seed).normal(0.0, 1.0, len(ids))

    def verdicts(spread: float) -> dict[Key, float]:
        if spread == 0.0:
            return dict(zip(ids, ((labels - 0.5) * 2.0 * CERTAIN).tolist(), strict=True))
        return dict(zip(ids, ((labels + spread * noise - 0.5) / spread**2).tolist(), strict=True))

    if auc >= 1.0 or len(set(labels)) < 2:
        return verdicts(0.0)
    # The AUC falls as the noise grows: bisect its spread, starting from the two-Gaussian value
    # AUC = Φ(1 / (σ√2)).
    low, high = 0.0, 4.0 / (math.sqrt(2.0) * NormalDist().inv_cdf(auc))
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if (measured_auc(right, verdicts(middle)) or 0.5) > auc else (low, middle)
    return verdicts((low + high) / 2)


def measured_auc(right: Mapping[Key, bool], scores: Mapping[Key, float]) -> float | None:
    """The AUC of `scores` for `right` over the answers both have (ties count one half); None without both
    classes."""
    from sklearn.metrics import roc_auc_score

    ids = [key for key in right if key in scores]
    labels = [right[key] for key in ids]
    if len(set(labels)) < 2:
        return None
    return float(roc_auc_score(labels, [scores[key] for key in ids]))
