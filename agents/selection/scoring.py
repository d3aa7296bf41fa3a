"""The coarse-stage score, vectorised over the M retrieved candidates, in five variants.

The UCB variants (`normalized`, `paper`), per candidate `a` with `n` visits out of `N` total visits
(method.md §2):

    S_sim = w_sim * cos(subtask, profile)
    R     = (reward_sum + 1) / (n + 1)               smoothed mean: 1.0 (optimistic) before any visit
    S_rep = w_rep * R
    base  = (S_rep - P_cost + S_sim) / 2
    bonus = c * sqrt(ln(N + 1.01) / (n + 1e-8))      exploration; huge for an unvisited agent
    gate  = sigmoid(gate_slope * (S_sim - gate_threshold))
    score = (base + bonus) * gate

LLM agents and tool agents go through exactly the same formula; only their statistics differ.

Cost penalty `P_cost`:

- `paper`: `ln(1 + mean cost per call in USD)` with mean cost 0 before any visit, as in the authors'
  release. At typical prices this is ~0.002, so cost has no influence.
- every other variant (`thompson`, the default, among them): each candidate's expected cost per call is
  smoothed with one pseudo-call at its list price, `cost = (cost_sum + prior) / (n + 1)`, where `prior =
  price_in * prior_input_tokens + price_out * prior_output_tokens` (per token); then

      P_cost = w_rep * cost / answer_value_usd

  with `answer_value_usd` the USD a right answer is worth to the user (the budget knob: `ReSoSettings`).
  The score then grows with w_rep * (p - cost / value) for success estimate p: a candidate's expected
  net value in units of the answer's value, so a candidate right 10 % more often is worth 10 % of the value
  more, and a cheaper one wins when its price saving is larger than that. The penalty depends on no other
  candidate: adding a model to the pool leaves every other model's score as it was. An infinite value
  prices nothing (a training run that should learn every model's record, the dear ones' too).

Bayesian variants (`thompson`, the default, `kl-ucb` and `moss`; see `reso.agents.selection.posterior`)
replace the smoothed mean and its bonus by a belief about the success probability, scored against the mean
of the Beta posterior Beta(1 + reward_sum, 1 + n - reward_sum), and keep the priced cost penalty and
the similarity term and gate:

    mean   = (reward_sum + 1) / (n + 2)               posterior mean ("reputation"): 0.5 before any visit
    belief = thompson: a draw from Beta((reward_sum + 1) / c^2, (n - reward_sum + 1) / c^2)
             kl-ucb:   max {q : n * KL(reward_sum / n, q) <= c * ln(N + 1.01)}
             moss:     min(1, reward_sum / n + c * sqrt(max(ln(n_typ / n), 0) / n)),  n_typ = the
                       candidates' mean visit count
             c = 0:    the posterior mean (every variant; deterministic)
             n = 0:    1 (every variant, every c): a candidate never tried is tried first, as under UCB
                       (under `moss`, tied with a visited one whose index reaches the cap of 1)
    base   = (w_rep * mean - P_cost + S_sim) / 2
    bonus  = w_rep * (belief - mean) / 2               so that score = (w_rep * belief - P_cost + S_sim) / 2 * gate
    score  = (base + bonus) * gate

The Thompson draw comes from the posterior sharpened by c (same mean, about c times the spread; c = 1 is
plain Thompson sampling, which keeps exploring when 63 agents with close success rates share 2,000
subtasks). Its default, c = 0.3, was chosen on routing-simulation seeds 8-103, away from the seeds 0-7
that `reso bench routing` reports. KL-UCB's default c is 1 (plain KL-UCB). MOSS (anytime, Degenne &
Perchet 2016) stops exploring a candidate once it has the candidates' mean number of visits, so its
exploration shrinks with more agents per subtask, where KL-UCB's and Thompson's do not; its c = 0.2 was
chosen on the same seeds 8-103. c = 0 scores the posterior mean of every visited candidate,
deterministically: a frozen DADB is exploited.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from reso.agents.selection.config import SelectorConfig, Variant
from reso.agents.selection.posterior import beta_posterior, kl_upper_bound, moss_index, thompson_belief

COMPONENTS = (
    "similarity", "s_sim", "reputation", "s_rep", "cost_penalty", "base", "exploration", "gate", "score",
    "visits", "mean_cost",
)
BAYES_COMPONENTS = (*COMPONENTS, "posterior_mean", "belief")
BAYES_VARIANTS = frozenset({Variant.THOMPSON, Variant.KL_UCB, Variant.MOSS})
_VISIT_EPS = 1e-8
_LOG_OFFSET = 1.01


def score_components(
    similarity: np.ndarray,
    visits: np.ndarray,
    reward_sum: np.ndarray,
    cost_sum: np.ndarray,
    prior_cost: np.ndarray,
    total_visits: float,
    config: SelectorConfig,
    rng: np.random.Generator | None = None,
    *,
    answer_value_usd: float = math.inf,
) -> dict[str, np.ndarray]:
    """Every term of the configured variant's score for M candidates at once.

    Args:
        similarity: Cosine between the subtask and each candidate's profile, shape (M,).
        visits: Visit counts n, shape (M,).
        reward_sum: Sums of rewards, shape (M,).
        cost_sum: Sums of costs in USD, shape (M,).
        prior_cost: List-price cost of one typical call per candidate (all variants but `paper`).
        total_visits: N, the visits of all agents in the pool (not only the candidates).
        config: Weights and the variant.
        rng: Source of the Thompson draws (the selector's seeded generator); unused by the other variants.
        answer_value_usd: What a right answer is worth, in USD: the price of each candidate weighs against it
            (every variant but `paper`); inf: cost counts for nothing.

    Returns:
        Arrays of shape (M,) keyed by the names in `COMPONENTS` (`BAYES_COMPONENTS` for the Bayesian variants).
    """
    sim = np.asarray(similarity, dtype=np.float64)
    n = np.asarray(visits, dtype=np.float64)
    rewards = np.asarray(reward_sum, dtype=np.float64)
    costs = np.asarray(cost_sum, dtype=np.float64)
    if config.variant in BAYES_VARIANTS:
        terms = _bayes_terms(n, rewards, costs, prior_cost, total_visits, config, rng, answer_value_usd)
    else:
        terms = _ucb_terms(n, rewards, costs, prior_cost, total_visits, config, answer_value_usd)
    s_sim = config.w_sim * sim
    s_rep = config.w_rep * terms.reputation
    base = (s_rep - terms.penalty + s_sim) / 2.0
    gate = _gate(s_sim, config)
    score = (base + terms.exploration) * gate
    return {
        "similarity": sim, "s_sim": s_sim, "reputation": terms.reputation, "s_rep": s_rep,
        "cost_penalty": terms.penalty, "base": base, "exploration": terms.exploration, "gate": gate, "score": score,
        "visits": n, "mean_cost": terms.mean_cost, **terms.extra,
    }


class _VariantTerms(NamedTuple):
    """What a variant decides: the success estimate, its exploration bonus and the cost penalty (with the
    expected cost per call it comes from); `extra` holds the variant's own components."""

    reputation: np.ndarray
    exploration: np.ndarray
    mean_cost: np.ndarray
    penalty: np.ndarray
    extra: dict[str, np.ndarray]


def _ucb_terms(n: np.ndarray, rewards: np.ndarray, costs: np.ndarray, prior_cost: np.ndarray,
               total_visits: float, config: SelectorConfig, answer_value_usd: float) -> _VariantTerms:
    """The UCB variants (`normalized`, `paper`): the smoothed mean and the UCB bonus."""
    reputation = (rewards + 1.0) / (n + 1.0)
    if config.variant == Variant.PAPER:
        mean_cost = np.divide(costs, n, out=np.zeros_like(costs), where=n > 0)
        penalty = np.log1p(mean_cost)
    else:
        mean_cost, penalty = _cost_penalty(costs, n, prior_cost, config.w_rep, answer_value_usd)
    exploration = config.exploration_c * np.sqrt(np.log(total_visits + _LOG_OFFSET) / (n + _VISIT_EPS))
    return _VariantTerms(reputation, exploration, mean_cost, penalty, {})


def _bayes_terms(n: np.ndarray, rewards: np.ndarray, costs: np.ndarray, prior_cost: np.ndarray,
                 total_visits: float, config: SelectorConfig, rng: np.random.Generator | None,
                 answer_value_usd: float) -> _VariantTerms:
    """The Bayesian variants (`thompson`, `kl-ucb`, `moss`): the posterior mean, and the belief's distance
    from it as the bonus."""
    alpha, beta = beta_posterior(n, rewards)
    mean = alpha / (alpha + beta)
    c = float(config.exploration_c or 0.0)
    if c == 0:
        belief = mean
    elif config.variant == Variant.THOMPSON:
        if rng is None:
            raise ValueError("the thompson variant needs a random generator (rng) for its posterior draws")
        belief = thompson_belief(alpha, beta, rng, c)
    else:
        empirical = np.divide(rewards, n, out=np.zeros_like(n), where=n > 0)
        if config.variant == Variant.MOSS:
            belief = moss_index(empirical, n, float(n.mean()), c)
        else:
            belief = kl_upper_bound(empirical, n, c * float(np.log(total_visits + _LOG_OFFSET)))
    # A candidate never visited gets the benefit of the doubt, exploiting or not, as under UCB (whose smoothed
    # mean is 1 for it): with every mean at the prior's 0.5, a fresh DADB would otherwise pick by price alone.
    belief = np.where(n > 0, belief, 1.0)
    mean_cost, penalty = _cost_penalty(costs, n, prior_cost, config.w_rep, answer_value_usd)
    exploration = config.w_rep * (belief - mean) / 2.0
    return _VariantTerms(mean, exploration, mean_cost, penalty, {"posterior_mean": mean, "belief": belief})


def _cost_penalty(
    costs: np.ndarray, n: np.ndarray, prior_cost: np.ndarray, w_rep: float, answer_value_usd: float
) -> tuple[np.ndarray, np.ndarray]:
    """Expected cost per call (one list-price pseudo-call as prior) and its penalty against the value of a
    right answer (module docstring)."""
    mean_cost = (costs + np.asarray(prior_cost, dtype=np.float64)) / (n + 1.0)
    if np.isinf(answer_value_usd):
        return mean_cost, np.zeros_like(mean_cost)
    return mean_cost, w_rep * mean_cost / answer_value_usd


def _gate(s_sim: np.ndarray, config: SelectorConfig) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-config.gate_slope * (s_sim - config.gate_threshold)))


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
