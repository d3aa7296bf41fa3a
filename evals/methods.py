"""The methods an evaluation compares: ReSo, its random-selection ablation, one model alone, self-consistency
of one model, a majority vote of several models, a cheap-then-strong cascade, and the oracle.

Every method runs through the same graph; a method only changes settings and, for the baselines, pins
which agents answer and how many. Integration steps (`TaskDAG.role`) go to the pool's exact tool for
every method when the pool has one (`ReSoSettings.integration`), so a comparison is decided by the
sub-questions alone.

- `reso`: the team as built (coarse selection, CRM, optional adaptive fine stage).
- `random`: k agents drawn uniformly per subtask, all answering (the paper's ablation: asked at once).
- `single:MODEL`: one model answers every sub-question; MODEL is an agent id or a model name.
- `cot-sc:MODEL:N`: N samples of one model, majority by answer equivalence.
- `vote:K` / `vote:A,B,C`: K models answer every sub-question; the answer with the most votes by answer
  equivalence is kept, each vote weighted by its model's reputation in the DADB (equal weights without
  one; ties go to the model listed first). `vote:K` takes the K models with the best training record in
  the DADB (smoothed mean reward, prior 1/2), so it needs a trained DADB.
- `cascade:A,B>C`: A and B answer; their answer is kept when they agree, else C answers and its answer is
  kept (A's when C fails).
- `oracle`: every model answers, and the scorer sees the reference: it uses the labels, so it is an upper
  bound, never a competitor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from reso.agents.pool import Pool
from reso.agents.profiles import Agent, AgentKind
from reso.agents.selection.candidate_score import Rule, RuleChoice
from reso.agents.selection.selector import Candidate
from reso.evals.method_kind import MethodKind
from reso.graphs.escalation import AskingRule, Cascade
from reso.graphs.team import Team
from reso.reward.answers import answers_match, extract_answer
from reso.reward.base import Score, ScoreItem
from reso.reward.reliability_vote import record_reliability
from reso.reward.rule import RuleScorer

ORACLE_LABEL = "oracle (uses labels)"
# Every baseline asks its k agents at once (the paper's fine stage), whatever ReSo's asking rule.
_FIXED: dict[str, Any] = {"asking.rule": AskingRule.FIXED, "asking.k_max": None}


class MethodError(ValueError):
    """A method name that cannot be used with this pool."""


@dataclass
class PinnedSelector:
    """Answers every subtask with fixed agents, in the given order (whatever k). Learns nothing."""

    pool: Pool
    agents: Sequence[str]

    def select(self, subtask: str, k: int | None = None, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Candidate]:
        return [Candidate(self.pool.get(agent_id), 1.0, rule=RuleChoice(Rule.PINNED))
                for agent_id in self.agents if agent_id not in exclude]

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        return None


@dataclass(frozen=True)
class Method:
    """A parsed method: its name, setting overrides, and which agents it pins."""

    name: str
    overrides: dict[str, Any] = field(default_factory=dict)
    kind: MethodKind = MethodKind.RESO
    agents: tuple[str, ...] = ()
    count: int = 0
    shown: str = ""  # the label, where it differs from the name (one model's runs go by the model)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", MethodKind(self.kind))

    @property
    def label(self) -> str:
        """How tables and plots name the method: the oracle says that it uses the labels, and one model's
        runs name the model (`single:o1-mini`, not the agent `single:o1-mini/algebra` or a replay spec)."""
        return ORACLE_LABEL if self.kind is MethodKind.ORACLE else self.shown or self.name

    def adapt(self, team: Team, *, seed: int = 0) -> Team:
        """The team this method runs with: ReSo's as built; the baselines swap selector, scorer and policy."""
        from reso.reward.registry import build_scorer

        match self.kind:
            case MethodKind.RESO:
                return team
            case MethodKind.RANDOM:
                from reso.agents.selection.selector import RandomSelector

                return dataclasses.replace(team, selector=RandomSelector(team.pool, seed=seed))
            case MethodKind.ORACLE:
                selector = PinnedSelector(team.pool, model_agents(team.pool))
                return dataclasses.replace(team, selector=selector, scorer=ExactFirstRuleScorer())
            case MethodKind.VOTE:
                agents = self.agents or best_recorded(team, self.count)
                return dataclasses.replace(team, selector=PinnedSelector(team.pool, agents),
                                           scorer=build_scorer("consensus"))
            case MethodKind.CASCADE:
                return dataclasses.replace(team, selector=PinnedSelector(team.pool, self.agents),
                                           scorer=build_scorer("consensus"),
                                           asking=Cascade(cheap=len(self.agents) - 1))
            case MethodKind.SINGLE | MethodKind.COT_SC:
                # One model's answers. A lone answer's score decides nothing, and a learned CRM would spend
                # most of a single-model run scoring it, so both keep by agreement.
                selector = PinnedSelector(team.pool, list(self.agents) * max(1, self.count))
                return dataclasses.replace(team, selector=selector, scorer=build_scorer("consensus"))


class ExactFirstRuleScorer(RuleScorer):
    """The oracle's scorer: the rule (within 1 %), with an exact match ahead of a merely close one. A linked
    child question needs its parent's exact value, so a close answer kept over an exact one would lose the
    item for the oracle."""

    name = "rule-exact-first"

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        scores = super().score_detailed(items)
        return [score if score.value < 1.0 or _exact(item) else Score(0.99, "within tolerance, not exact")
                for item, score in zip(items, scores, strict=True)]


def _exact(item: ScoreItem) -> bool:
    value = extract_answer(item.answer)
    return value is not None and answers_match(value, str(item.reference), rel_tol=1e-9)


def llm_agents(pool: Pool) -> list[str]:
    """One agent per distinct LLM model (its first role): the single-model baselines."""
    llm_by_model: dict[str, str] = {}
    for agent in pool:
        if agent.kind == AgentKind.LLM:
            llm_by_model.setdefault(agent.model.spec, agent.id)
    return list(llm_by_model.values())


def model_agents(pool: Pool) -> list[str]:
    """One agent per distinct LLM model, then the tool agents: the oracle's panel."""
    return [*llm_agents(pool), *(agent.id for agent in pool if agent.kind == AgentKind.TOOL)]


def model_name(agent: Agent) -> str:
    """The name a model goes by in method names (`ModelSpec.model_name`)."""
    return agent.model.model_name


def resolve_agent(name: str, pool: Pool) -> str:
    """An agent id from an agent id or a model name (that model's first role).

    Raises:
        MethodError: Neither an agent id nor a model of the pool.
    """
    if name in pool.ids:
        return name
    for agent in pool:
        if agent.kind == AgentKind.LLM and name in {model_name(agent), agent.model.short_name, agent.model.spec}:
            return agent.id
    models = sorted({model_name(agent) for agent in pool if agent.kind == AgentKind.LLM})
    raise MethodError(f"no agent or model {name!r} in pool {pool.name!r}; models: {', '.join(models)}")


def best_recorded(team: Team, count: int) -> list[str]:
    """The `count` models with the best training record in the DADB (smoothed mean reward with a prior of
    one half, so an agent seen once does not outrank one seen often), one agent per model.

    Raises:
        MethodError: The DADB holds no training record for these models.
    """
    llm = llm_agents(team.pool)
    # The model's record over all its roles (they replay or call the same model).
    records = {agent_id: team.model_record(agent_id) or (0.0, 0) for agent_id in llm}
    record = {agent_id: (record_reliability(*rec), rec[1]) for agent_id, rec in records.items()}
    if not any(visits for _, visits in record.values()):
        raise MethodError(f"vote:{count} takes the {count} models with the best training record, and the DADB has "
                          "none: run a training evaluation with the same --db first, or name the models: "
                          "vote:A,B,C")
    if len(llm) < count:
        raise MethodError(f"vote:{count} needs {count} models; pool {team.pool.name!r} has {len(llm)}")
    ranked = sorted(llm, key=lambda agent_id: (-record[agent_id][0], team.agent(agent_id).price_out))
    return ranked[:count]


UNKNOWN_METHOD = ("unknown method {text!r}: use reso, random, oracle, single:MODEL, cot-sc:MODEL:N, vote:K, "
                  "vote:A,B,C or cascade:A,B>C")


def parse_method(text: str, pool: Pool) -> Method:
    """`reso`, `random`, `oracle`, `single:MODEL`, `cot-sc:MODEL:N`, `vote:K`, `vote:A,B,…` or
    `cascade:A,B>C` (MODEL: an agent id or a model name)."""
    name, _, rest = text.partition(":")
    if name not in set(MethodKind):
        raise MethodError(UNKNOWN_METHOD.format(text=text))
    kind = MethodKind(name)
    if kind is MethodKind.RESO and not rest:
        return Method(kind.value)
    if kind is MethodKind.RANDOM and not rest:
        return Method(kind.value, {**_FIXED}, kind=kind)
    if kind is MethodKind.ORACLE and not rest:
        return Method(kind.value, {"reward.sees_reference": True, "asking.k": len(model_agents(pool)), **_FIXED},
                      kind=kind)
    if kind is MethodKind.SINGLE and rest:
        agent = resolve_agent(rest, pool)
        return Method(text, {"asking.k": 1, **_FIXED}, kind=kind, agents=(agent,),
                      shown=f"single:{model_name(pool.get(agent))}")
    if kind is MethodKind.COT_SC and rest:
        model, _, count = rest.rpartition(":")
        if not model or not count.isdigit() or int(count) < 1:
            raise MethodError(f"method {text!r}: expected cot-sc:MODEL:N with N ≥ 1")
        agent = resolve_agent(model, pool)
        return Method(text, {"asking.k": int(count), **_FIXED}, kind=kind, agents=(agent,), count=int(count),
                      shown=f"cot-sc:{model_name(pool.get(agent))}:{count}")
    if kind is MethodKind.VOTE and rest:
        if rest.isdigit():
            if int(rest) < 2:
                raise MethodError(f"method {text!r}: a vote needs K ≥ 2 models")
            return Method(text, {"asking.k": int(rest), **_FIXED}, kind=kind, count=int(rest))
        agents = tuple(resolve_agent(part.strip(), pool) for part in rest.split(","))
        if len(agents) < 2:
            raise MethodError(f"method {text!r}: a vote needs at least two models")
        return Method(text, {"asking.k": len(agents), **_FIXED}, kind=kind, agents=agents, count=len(agents))
    if kind is MethodKind.CASCADE and rest:
        cheap, sep, strong = rest.partition(">")
        cheap_names = [part.strip() for part in cheap.split(",") if part.strip()]
        if not sep or not cheap_names or not strong.strip() or ">" in strong:
            raise MethodError(f"method {text!r}: expected cascade:A,B>C (cheap models, then the strong one)")
        agents = tuple(resolve_agent(part, pool) for part in [*cheap_names, strong.strip()])
        return Method(text, {"asking.k": len(cheap_names), **_FIXED}, kind=kind, agents=agents)
    raise MethodError(UNKNOWN_METHOD.format(text=text))
