"""What the selector knows of an agent: its own record, pooled with its model's record in other roles and domains.

An agent is a model in a role, and the role changes the prompt, not the model's skill: with forty models in
four roles and four subtask domains, learning every (agent, domain) row apart means 640 arms where there are
forty models to tell apart, and a few hundred training subtasks never get past trying each once. So the
bandit scores each agent by a hierarchy of its model's records (a partial pooling, as in empirical Bayes):

    n, s    the (model, domain) record summed over the model's roles, the agent's own role counted fully
            and every other role with weight `role_weight` (1: roles share everything; 0: nothing)
    prior   the model's record in the other domains, as pseudo-observations at its mean, at most
            `domain_prior` of them: a model that was good at algebra starts geometry as a good bet,
            not as an unknown, but a few geometry visits outweigh it

The sums go to the same Beta posterior (or smoothed mean) as a plain record, and a model tried in any role
or domain is no longer "never visited". Costs are pooled the same way (the roles of one model cost alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reso.agents.selection.stats_cache import StatsTable

__all__ = ["ModelPooling", "PooledRecord"]


@dataclass(frozen=True)
class PooledRecord:
    """Visits, reward sums and cost sums the score reads for each candidate (pseudo-counts included)."""

    visits: np.ndarray
    reward_sum: np.ndarray
    cost_sum: np.ndarray


class ModelPooling:
    """Pools the statistics of agents that share a base model (see the module docstring)."""

    def __init__(self, models: Sequence[str], role_weight: float, domain_prior: float) -> None:
        """`models` gives each pool position's base model (its spec); the weights as in the module docstring."""
        index: dict[str, int] = {}
        self.model_of = np.array([index.setdefault(spec, len(index)) for spec in models], dtype=np.int64)
        self.count = len(index)
        self.role_weight = role_weight
        self.domain_prior = domain_prior

    def record(self, positions: np.ndarray, domain: StatsTable, overall: StatsTable | None) -> PooledRecord:
        """The pooled record of the agents at `positions`.

        Args:
            positions: Pool positions of the candidates.
            domain: Every agent's statistics in the subtask's domain (or overall, without domains).
            overall: Every agent's statistics over all domains; None when `domain` is already overall.
        """
        if self.role_weight == 0 and (overall is None or self.domain_prior == 0):  # the agent's own record only
            return PooledRecord(*(c[positions].astype(np.float64)
                                  for c in (domain.visits, domain.reward_sum, domain.cost_sum)))
        model = self.model_of[positions]
        pooled: list[np.ndarray] = []
        for column, whole in ((domain.visits, overall.visits if overall else None),
                              (domain.reward_sum, overall.reward_sum if overall else None),
                              (domain.cost_sum, overall.cost_sum if overall else None)):
            own = column[positions].astype(np.float64)
            in_domain = self._model_sums(column)[model]  # each model's record in the domain, read once
            row = own + self.role_weight * (in_domain - own)
            # The model's record outside this domain, kept for the prior below.
            pooled += [row, np.maximum(self._model_sums(whole)[model] - in_domain, 0.0) if whole is not None
                       and self.domain_prior > 0 else np.zeros_like(row)]
        visits, other_visits, rewards, other_rewards, costs, other_costs = pooled
        # Shrunk to at most `domain_prior` pseudo-visits at the model's mean outside the domain.
        weight = np.divide(np.minimum(other_visits, self.domain_prior), other_visits,
                           out=np.zeros_like(other_visits), where=other_visits > 0)
        return PooledRecord(visits + weight * other_visits, rewards + weight * other_rewards,
                            costs + weight * other_costs)

    def _model_sums(self, column: np.ndarray) -> np.ndarray:
        return np.bincount(self.model_of, weights=column, minlength=self.count)
