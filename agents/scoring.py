"""The coarse-stage UCB score, vectorised over the M retrieved candidates, in two variants.

Shared by both variants, per candidate `a` with `n` visits out of `N` total visits (method.md §2):

    S_sim = w_sim * cos(subtask, profile)
    R     = (reward_sum + 1) / (n + 1)               smoothed mean: 1.0 (optimistic) before any visit
    S_rep = w_rep * R
    base  = (S_rep - P_cost + S_sim) / 2
    bonus = c * sqrt(ln(N + 1.01) / (n + 1e-8))      exploration; huge for an unvisited agent
    gate  = sigmoid(gate_slope * (S_sim - gate_threshold))
    score = (base + bonus) * gate

LLM agents and tool agents go through exactly the same formula; only their statistics differ.

Cost penalty `P_cost`:

- `paper`: `ln(1 + mean cost per call in USD)` with mean cost 0 before any visit; `cost_weight` is not
  applied, as in the authors' release. At typical prices this is ~0.002, so cost has no influence.
- `normalized` (default): each candidate's expected cost per call is smoothed with one pseudo-call at its
  list price, `cost = (cost_sum + prior) / (n + 1)`, where `prior = price_in * prior_input_tokens +
  price_out * prior_output_tokens` (per token); then

      P_cost = cost_weight * cost / max(max cost among the candidates, cost_ref_usd)

  a number in [0, cost_weight]: the most expensive candidate pays `cost_weight`, a candidate at a tenth of
  its price pays a tenth of that, a free tool agent pays nothing. It is scale-free (only price ratios
  among the candidates matter) unless `cost_ref_usd` sets an absolute reference. With the defaults
  (w_rep 2, cost_weight 1) the full penalty equals half a unit of smoothed reward: a cheap agent beats
  a dearer one of equal reputation and similarity, but an agent that is clearly more reliable (by more
  than ~0.5 reward minus its price share) still beats a cheap poor one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from reso.agents.selector import SelectorConfig

COMPONENTS = (
    "similarity", "s_sim", "reputation", "s_rep", "cost_penalty", "base", "exploration", "gate", "score",
    "visits", "mean_cost",
)
_VISIT_EPS = 1e-8
_LOG_OFFSET = 1.01


def ucb_components(
    similarity: np.ndarray,
    visits: np.ndarray,
    reward_sum: np.ndarray,
    cost_sum: np.ndarray,
    prior_cost: np.ndarray,
    total_visits: float,
    config: SelectorConfig,
) -> dict[str, np.ndarray]:
    """Every term of the UCB score for M candidates at once.

    Args:
        similarity: Cosine between the subtask and each candidate's profile, shape (M,).
        visits: Visit counts n, shape (M,).
        reward_sum: Sums of rewards, shape (M,).
        cost_sum: Sums of costs in USD, shape (M,).
        prior_cost: List-price cost of one typical call per candidate (used by `normalized` only).
        total_visits: N, the visits of all agents in the pool (not only the candidates).
        config: Weights and the variant.

    Returns:
        Arrays of shape (M,) keyed by the names in `COMPONENTS`.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    n = np.asarray(visits, dtype=np.float64)
    s_sim = config.w_sim * sim
    reputation = (np.asarray(reward_sum, dtype=np.float64) + 1.0) / (n + 1.0)
    s_rep = config.w_rep * reputation
    costs = np.asarray(cost_sum, dtype=np.float64)
    if config.variant == "paper":
        mean_cost = np.divide(costs, n, out=np.zeros_like(costs), where=n > 0)
        penalty = np.log1p(mean_cost)
    else:
        mean_cost = (costs + np.asarray(prior_cost, dtype=np.float64)) / (n + 1.0)
        scale = max(float(mean_cost.max(initial=0.0)), config.cost_ref_usd)
        penalty = config.cost_weight * mean_cost / scale if scale > 0 else np.zeros_like(mean_cost)
    base = (s_rep - penalty + s_sim) / 2.0
    exploration = config.exploration_c * np.sqrt(np.log(total_visits + _LOG_OFFSET) / (n + _VISIT_EPS))
    gate = 1.0 / (1.0 + np.exp(-config.gate_slope * (s_sim - config.gate_threshold)))
    score = (base + exploration) * gate
    return {
        "similarity": sim, "s_sim": s_sim, "reputation": reputation, "s_rep": s_rep, "cost_penalty": penalty,
        "base": base, "exploration": exploration, "gate": gate, "score": score, "visits": n,
        "mean_cost": mean_cost,
    }


def paper_score(similarity: float, visits: int, reward_sum: float, cost_sum: float, total_visits: int,
                w_sim: float = 0.6, w_rep: float = 2.0, exploration_c: float = 0.3, gate_slope: float = 10.0,
                gate_threshold: float = 0.4) -> float:
    """The authors' score for one agent in plain Python scalars, as their per-agent loop computes it.

    Kept scalar on purpose: the selection benchmark times this against the vectorised path.
    """
    import math

    s_sim = w_sim * similarity
    s_rep = w_rep * (reward_sum + 1.0) / (visits + 1.0)
    penalty = math.log(1.0 + (cost_sum / visits if visits else 0.0))
    base = (s_rep - penalty + s_sim) / 2.0
    bonus = exploration_c * math.sqrt(math.log(total_visits + _LOG_OFFSET) / (visits + _VISIT_EPS))
    gate = 1.0 / (1.0 + math.exp(-gate_slope * (s_sim - gate_threshold)))
    return (base + bonus) * gate
