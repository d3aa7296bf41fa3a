"""`AgentStats`: one agent's accumulated statistics as the DADB stores them, with the derived means."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentStats:
    """Accumulated statistics of one agent (over all domains when `domain` is None)."""

    agent_id: str
    visits: int = 0
    reward_sum: float = 0.0
    reward_sq_sum: float = 0.0
    cost_sum: float = 0.0
    token_sum: int = 0
    last_update: float = 0.0
    domain: str | None = None

    @property
    def mean_reward(self) -> float:
        """Plain mean reward; 0.0 before the first visit."""
        return self.reward_sum / self.visits if self.visits else 0.0

    @property
    def smoothed_reward(self) -> float:
        """The paper's smoothed mean (sum + 1) / (visits + 1): 1.0 for an agent never visited."""
        return (self.reward_sum + 1.0) / (self.visits + 1.0)

    @property
    def reward_variance(self) -> float:
        """Population variance of the rewards; 0.0 with fewer than two visits."""
        if self.visits < 2:
            return 0.0
        mean = self.mean_reward
        return max(self.reward_sq_sum / self.visits - mean * mean, 0.0)

    @property
    def mean_cost(self) -> float:
        """Mean cost per call in USD; 0.0 before the first visit."""
        return self.cost_sum / self.visits if self.visits else 0.0

    @property
    def mean_tokens(self) -> float:
        return self.token_sum / self.visits if self.visits else 0.0
