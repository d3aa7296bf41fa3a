"""The methods an evaluation compares: ReSo, its random-selection ablation, one agent alone,
self-consistency of one agent, and the oracle.

Every method runs through the same graph; a method only changes settings and, for the baselines, pins
which agents answer. On replay data an agent has no recording of a whole composite question, so the
single-agent baselines answer each sub-question of the ground-truth plan with that agent and the final
integration step with the pool's exact tool, as ReSo may: the comparison then isolates selection.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from reso.agents.pool import Pool
from reso.graphs.team import Team


class MethodError(ValueError):
    """A method name that cannot be used with this pool."""


@dataclass(frozen=True)
class PinnedCandidate:
    agent: Any
    score: float = 1.0
    components: dict[str, float] = field(default_factory=dict)


@dataclass
class PinnedSelector:
    """Answers every subtask with fixed agents: `agents` for sub-questions, `final_agents` for the
    integration steps (recognised by their instruction text). Learns nothing."""

    pool: Pool
    agents: Sequence[str]
    final_agents: Sequence[str]
    final_instructions: Collection[str] = ()

    def select(self, subtask: str, k: int | None = None, *, domain: str | None = None) -> list[PinnedCandidate]:
        chosen = self.final_agents if subtask in self.final_instructions else self.agents
        return [PinnedCandidate(self.pool.get(agent_id), components={"pinned": 1.0}) for agent_id in chosen]

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        return None


@dataclass(frozen=True)
class Method:
    """A parsed method: its name, setting overrides, and how it changes the team."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    pinned_agent: str | None = None
    samples: int = 1
    oracle: bool = False
    random: bool = False

    def adapt(self, team: Team, final_instructions: Collection[str], *, seed: int = 0) -> Team:
        """The team this method runs with: ReSo's as built; the baselines swap selector and scorer."""
        if self.random:
            from reso.agents.selector import RandomSelector, SelectorConfig

            return dataclasses.replace(team, selector=RandomSelector(team.pool, config=SelectorConfig(seed=seed)))
        if self.oracle:
            from reso.reward.registry import build_scorer

            llm_by_model: dict[str, str] = {}
            for agent in team.pool:
                if agent.kind == "llm":
                    llm_by_model.setdefault(agent.model.spec, agent.id)
            everyone = [*llm_by_model.values(), *_tool_ids(team.pool)]
            selector = PinnedSelector(team.pool, everyone, everyone, final_instructions)
            return dataclasses.replace(team, selector=selector, scorer=build_scorer("rule"))
        if self.pinned_agent is None:
            return team
        agent = team.pool.get(self.pinned_agent)
        tools = _tool_ids(team.pool)
        finals = tools[:1] if tools else [agent.id]
        selector = PinnedSelector(team.pool, [agent.id] * self.samples, finals, final_instructions)
        if self.samples > 1:
            from reso.reward.registry import build_scorer

            return dataclasses.replace(team, selector=selector, scorer=build_scorer("consensus"))
        return dataclasses.replace(team, selector=selector)


def _tool_ids(pool: Pool) -> list[str]:
    return [agent.id for agent in pool if agent.kind == "tool"]


def parse_method(text: str, pool: Pool) -> Method:
    """`reso`, `random`, `oracle`, `single:AGENT` or `cot-sc:AGENT:N`."""
    name, _, rest = text.partition(":")
    if name == "reso" and not rest:
        return Method("reso")
    if name == "random" and not rest:
        return Method("random", random=True)
    if name == "oracle" and not rest:
        return Method("oracle", {"scorer_sees_reference": True}, oracle=True)
    if name == "single" and rest:
        _require_agent(rest, pool)
        return Method(text, {"k": 1}, pinned_agent=rest)
    if name == "cot-sc" and rest:
        agent_id, _, count = rest.rpartition(":")
        if not agent_id or not count.isdigit() or int(count) < 1:
            raise MethodError(f"method {text!r}: expected cot-sc:AGENT:N with N ≥ 1")
        _require_agent(agent_id, pool)
        return Method(text, {"k": int(count)}, pinned_agent=agent_id, samples=int(count))
    raise MethodError(f"unknown method {text!r}: use reso, random, oracle, single:AGENT or cot-sc:AGENT:N")


def _require_agent(agent_id: str, pool: Pool) -> None:
    if agent_id not in pool.ids:
        raise MethodError(f"no agent {agent_id!r} in pool {pool.name!r}; agents: {', '.join(pool.ids)}")
