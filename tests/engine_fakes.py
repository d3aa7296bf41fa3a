"""Scripted stand-ins for the engine's collaborators: answerers keyed by subtask text, a selector that
returns fixed agents, and a scorer that prefers answers with a final value. Used by graph tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from reso.agents.adapters.prompting import current_subtask
from reso.agents.pool import Pool, pool_from_dict
from reso.agents.selection.selector import Candidate
from reso.graphs.team import Team
from reso.reward.base import Score, ScoreItem, Scorer


class ScriptedAnswerer(BaseChatModel):
    """Answers by the first key of `answers` contained in the current subtask; optional delay or error."""

    answers: dict[str, str] = {}
    delays: dict[str, float] = {}
    failures: dict[str, str] = {}
    calls: list[str] = []
    tokens: tuple[int, int] = (10, 5)

    @property
    def _llm_type(self) -> str:
        return "scripted-answerer"

    def _key(self, messages: Sequence[BaseMessage]) -> str:
        subtask = current_subtask(str(messages[-1].content))
        for key in self.answers:
            if key in subtask:
                return key
        raise LookupError(f"no scripted answer for subtask: {subtask[:60]!r}")

    def _result(self, key: str) -> ChatResult:
        self.calls.append(key)
        if key in self.failures:
            raise RuntimeError(self.failures[key])
        usage = {"input_tokens": self.tokens[0], "output_tokens": self.tokens[1],
                 "total_tokens": sum(self.tokens)}
        message = AIMessage(content=self.answers[key], usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        return self._result(self._key(messages))

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        key = self._key(messages)
        await asyncio.sleep(self.delays.get(key, 0.0))
        return self._result(key)


@dataclass
class FixedSelector:
    """Returns the pool's agents whose ids `choose(subtask)` names, best first; records updates."""

    pool: Pool
    choose: Callable[[str], list[str]]
    updates: list[tuple[str, float]] = field(default_factory=list)

    def select(self, subtask: str, k: int | None = None, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Candidate]:
        ids = [agent_id for agent_id in self.choose(subtask) if agent_id not in exclude][: k or None]
        return [Candidate(self.pool.get(i), 1.0 - n / 10) for n, i in enumerate(ids)]

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        self.updates.append((agent_id, reward))


class HasValueScorer(Scorer):
    """1 for an answer with a boxed value, 0 otherwise."""

    name = "has-value"

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(1.0) if "\\boxed" in item.answer else Score(0.0, "no boxed value") for item in items]


def scripted_pool(agent_ids: Sequence[str]) -> Pool:
    return pool_from_dict({
        "name": "scripted",
        "agents": [{"id": agent_id, "model": {"spec": f"fake:{agent_id}", "price_in": 1.0, "price_out": 2.0},
                    "role": "Algebra", "profile": "Solves algebra."} for agent_id in agent_ids]
        + [{"id": "calc", "model": {"spec": "tool:calculator"}, "role": "Exact arithmetic",
            "profile": "Evaluates products of earlier answers."}],
    })


def scripted_team(models: Mapping[str, BaseChatModel], choose: Callable[[str], list[str]],
                  scorer: Scorer | None = None) -> Team:
    from reso.agents.adapters.tools import CalculatorChatModel

    pool = scripted_pool([i for i in models if i != "calc"])
    all_models = {"calc": CalculatorChatModel(), **models}
    return Team(pool=pool, models=all_models, selector=FixedSelector(pool, choose), scorer=scorer or HasValueScorer())
