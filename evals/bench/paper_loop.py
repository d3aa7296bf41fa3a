"""Baselines for `reso bench selection`: the authors' per-agent coarse stage, re-implemented from its behaviour.

The release scores every agent of the pool for every subtask: one coroutine per agent gathered with
asyncio, each awaiting its (cached) profile embedding, computing the cosine with numpy and mapping it
to [0, 1] and back, averaging the agent's full reward and cost histories (Python lists), evaluating the
UCB formula with `math`, adding a +-1e-5 random tie-break, and formatting a log line; then the whole
list is sorted. `ReleaseLoop` reproduces those steps (the log line is formatted but not written, which
favours the baseline). `plain_loop_select` is the leanest possible per-agent Python loop — plain
iteration, pre-summed statistics, no asyncio, no histories — as a lower bound on any per-agent loop.

Both are written out as Python loops on purpose: they are what the benchmark measures against.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reso.agents.dadb.sqlite import AgentStats
from reso.agents.selection.config import SelectorConfig


@dataclass
class LoopAgent:
    """What the release keeps in memory per agent: its prompt, its reward and cost histories, its visits."""

    agent_id: str
    prompt: str
    scoring_history: list[float]
    inference_costs: list[float]
    visit: int


def loop_agents(stats: Sequence[AgentStats]) -> list[LoopAgent]:
    """Histories consistent with the given sums (rewards 0/1; equal cost per call)."""
    agents = []
    for s in stats:
        ones = round(s.reward_sum)
        per_call = s.cost_sum / s.visits if s.visits else 0.0
        agents.append(LoopAgent(s.agent_id, f"profile prompt of {s.agent_id}",
                                [1.0] * ones + [0.0] * (s.visits - ones), [per_call] * s.visits, s.visits))
    return agents


class ReleaseLoop:
    """The release's coarse stage over a fixed pool, run on a private event loop."""

    def __init__(self, agents: Sequence[LoopAgent], vectors: np.ndarray, config: SelectorConfig) -> None:
        self.agents = list(agents)
        # The release caches embeddings as float64 arrays keyed by the agent's prompt text.
        self.cache = {agent.prompt: np.asarray(row, dtype=np.float64) for agent, row in zip(agents, vectors, strict=True)}
        self.config = config
        self.total_visit = sum(agent.visit for agent in agents)
        self._loop = asyncio.new_event_loop()

    async def _embedding(self, text: str) -> np.ndarray:
        return self.cache[text]

    async def _evaluate(self, agent: LoopAgent, target: np.ndarray) -> tuple[LoopAgent, float]:
        cfg = self.config
        vector = await self._embedding(agent.prompt)
        cos01 = (np.dot(target, vector) / (np.linalg.norm(target) * np.linalg.norm(vector)) + 1) / 2.0
        sim = cfg.w_sim * (cos01 - 0.5) * 2
        history = agent.scoring_history
        reputation = cfg.w_rep * ((sum(history) + 1) / (len(history) + 1) if history else 1.0)
        cost = sum(agent.inference_costs) / len(agent.inference_costs) if agent.inference_costs else 0.0
        penalty = math.log1p(cost)
        base = (reputation - penalty + sim) / 2
        c = cfg.exploration_c or 0.0  # resolved by SelectorConfig, never None here
        bonus = c * math.sqrt(math.log(self.total_visit + 1.01) / (agent.visit + 1e-8))
        gate = 1 / (1 + math.exp(-cfg.gate_slope * (sim - cfg.gate_threshold)))
        score = (base + bonus) * gate + random.uniform(-1e-5, 1e-5)
        _ = (f"Agent {agent.agent_id}: sim={sim:.3f}, reputation={reputation:.3f}, cost={penalty:.3f}, "
             f"final_score={base:.3f}, ucb_score={score:.3f}")
        return agent, score

    async def _select(self, target: np.ndarray, k: int) -> list[tuple[LoopAgent, float]]:
        scored = list(await asyncio.gather(*(self._evaluate(agent, target) for agent in self.agents)))
        scored.sort(key=lambda pair: pair[1], reverse=True)
        return scored[:k]

    def select(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The top k (agent_id, score) for one query embedding."""
        target = np.asarray(query, dtype=np.float64)
        return [(agent.agent_id, score) for agent, score in self._loop.run_until_complete(self._select(target, k))]

    def close(self) -> None:
        self._loop.close()


def plain_loop_select(
    query: np.ndarray,
    agent_ids: Sequence[str],
    vectors: Sequence[np.ndarray],
    stats: dict[str, tuple[int, float, float]],
    total_visits: int,
    k: int,
    config: SelectorConfig,
) -> list[tuple[str, float]]:
    """The leanest per-agent loop: same score, statistics pre-summed in a dict, no asyncio."""
    scored: list[tuple[float, str]] = []
    query_norm = np.linalg.norm(query)
    for agent_id, vector in zip(agent_ids, vectors, strict=True):
        cosine = float(np.dot(query, vector) / (query_norm * np.linalg.norm(vector)))
        visits, reward_sum, cost_sum = stats[agent_id]
        s_sim = config.w_sim * cosine
        s_rep = config.w_rep * (reward_sum + 1.0) / (visits + 1.0)
        penalty = math.log1p(cost_sum / visits if visits else 0.0)
        base = (s_rep - penalty + s_sim) / 2.0
        bonus = (config.exploration_c or 0.0) * math.sqrt(math.log(total_visits + 1.01) / (visits + 1e-8))
        gate = 1.0 / (1.0 + math.exp(-config.gate_slope * (s_sim - config.gate_threshold)))
        scored.append(((base + bonus) * gate + random.random() * 1e-9, agent_id))
    scored.sort(reverse=True)
    return [(agent_id, score) for score, agent_id in scored[:k]]
