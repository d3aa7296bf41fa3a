"""Beta posteriors of agents' success rates, Thompson draws, KL-UCB and MOSS indices, vectorised over candidates.

The DADB keeps, per (agent, domain), a visit count `n` and a sum of rewards `s`, each reward in [0, 1]. A
reward is read as a fractional Bernoulli outcome (`s` successes and `n - s` failures in all), so a uniform
Beta(1, 1) prior gives the posterior Beta(1 + s, 1 + n - s), whose mean `(s + 1) / (n + 2)` is 0.5 before
any visit. Fractional updates keep the DADB's sums as the only state: the "Bernoulli trick" (drawing a 0/1
outcome per reward) would need a random draw at write time and would throw information away.

- `thompson_belief`: a draw from each posterior (Thompson sampling) after sharpening it by `scale`:
  Beta(alpha / scale^2, beta / scale^2) has the posterior's mean and about `scale` times its spread, as
  if every observation (and the prior) counted 1 / scale^2 times (cf. the "posterior reshaping" of
  Chapelle & Li, 2011). `scale = 1` is plain Thompson sampling, which explores too much when dozens of
  agents share a few thousand subtasks (see `reso bench routing`); `scale = 0` is the posterior mean and
  draws nothing, so a frozen DADB is exploited deterministically.
- `kl_upper_bound`: the KL-UCB index, the largest `q >= p` with `count * KL(p, q) <= budget` for the
  Bernoulli KL divergence (Garivier & Cappé, 2011); `budget = 0` gives `p`.
- `moss_index`: the anytime MOSS index (Audibert & Bubeck, 2009; Degenne & Perchet, 2016),
  `p + scale * sqrt(log+(typical / count) / count)`, whose bonus vanishes once a candidate has as many
  visits as a typical one (N / K in the papers): with dozens of agents and a few thousand subtasks it
  stops exploring an agent at its share of the visits, where KL-UCB's `log N` budget keeps going.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "PRIOR_ALPHA", "PRIOR_BETA", "bernoulli_kl", "beta_posterior", "kl_upper_bound", "moss_index", "thompson_belief",
]

PRIOR_ALPHA = 1.0
PRIOR_BETA = 1.0
_EPS = 1e-12
_BISECTIONS = 50


def beta_posterior(visits: np.ndarray, reward_sum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior (alpha, beta) per candidate from visit counts and reward sums (rewards in [0, 1])."""
    n = np.asarray(visits, dtype=np.float64)
    successes = np.clip(np.asarray(reward_sum, dtype=np.float64), 0.0, n)
    return PRIOR_ALPHA + successes, PRIOR_BETA + n - successes


def thompson_belief(alpha: np.ndarray, beta: np.ndarray, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """One success probability per candidate, drawn from the posterior Beta(alpha, beta) reshaped by `scale`."""
    if scale == 0:
        return alpha / (alpha + beta)
    return rng.beta(alpha / scale**2, beta / scale**2)


def bernoulli_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """KL(Bernoulli(p) || Bernoulli(q)), elementwise; 0 log 0 is taken as 0."""
    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    q = np.clip(np.asarray(q, dtype=np.float64), _EPS, 1.0 - _EPS)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(p > 0, p * np.log(p / q), 0.0)
        down = np.where(p < 1, (1.0 - p) * np.log((1.0 - p) / (1.0 - q)), 0.0)
    return up + down


def kl_upper_bound(mean: np.ndarray, count: np.ndarray, budget: float) -> np.ndarray:
    """The largest q in [mean, 1] with count * KL(mean, q) <= budget, per candidate (1 when count is 0).

    Bisection over all candidates at once: KL(p, q) grows with q on [p, 1], and 50 halvings reach float
    precision. Hand-written because the project depends on numpy only (scipy's vectorised root finder is
    a transitive dependency at best, and only from scipy 1.15).
    """
    p = np.clip(np.asarray(mean, dtype=np.float64), 0.0, 1.0)
    n = np.asarray(count, dtype=np.float64)
    if budget <= 0:
        return p
    low, high = p.copy(), np.ones_like(p)
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2.0
        inside = n * bernoulli_kl(p, middle) <= budget
        low = np.where(inside, middle, low)
        high = np.where(inside, high, middle)
    return np.where(n > 0, low, 1.0)


def moss_index(mean: np.ndarray, count: np.ndarray, typical: float, scale: float) -> np.ndarray:
    """The anytime MOSS index per candidate, capped at 1 (a success rate); 1 when count is 0.

    Args:
        mean: Empirical mean reward per candidate, in [0, 1].
        count: Visits per candidate.
        typical: Visits of a typical candidate (their mean): the bonus is 0 from there on.
        scale: Multiplier of the bonus (1 in the papers); 0 gives `mean`.
    """
    p = np.clip(np.asarray(mean, dtype=np.float64), 0.0, 1.0)
    n = np.asarray(count, dtype=np.float64)
    visited = np.maximum(n, 1.0)
    bonus = scale * np.sqrt(np.log(np.maximum(typical / visited, 1.0)) / visited)
    return np.where(n > 0, np.minimum(p + bonus, 1.0), 1.0)
