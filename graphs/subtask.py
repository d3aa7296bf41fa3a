"""One subtask, start to finish: prompt, coarse selection, concurrent candidates, CRM scoring, the kept
answer and (in training mode) the DADB update.

Failures stay local: a candidate that errors, times out or is refused by the budget is recorded with
its error and left out of scoring; a subtask with no usable answer is marked failed and its dependants
still run, told that this answer is unknown.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reso.agents.answers import AgentAnswer
from reso.agents.invoke import call_agent
from reso.agents.prompting import ContextAnswer, render_subtask_prompt
from reso.graphs.budget import Budget
from reso.graphs.escalation import Asked, policy_for
from reso.graphs.planners.mas_format import FINAL_ID
from reso.graphs.records import CandidateRecord, StepRecord
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team
from reso.reward.answers import check_answer, extract_answer, to_number
from reso.reward.base import Score, ScoreItem
from reso.reward.reliability_vote import record_reliability

ProgressWriter = Callable[[dict[str, Any]], None]


def context_for(step_id: str, visible: Sequence[str], steps: Mapping[str, Mapping[str, Any]]) -> list[ContextAnswer]:
    """The earlier answers subtask `step_id` is shown, in the order given by `visible`."""
    context = []
    for earlier_id in visible:
        record = steps[earlier_id]
        context.append(ContextAnswer(
            id=earlier_id,
            instruction=record["instruction"],
            value=record.get("value"),
            answer_text=record.get("answer", ""),
            failed=record.get("status") != "done",
        ))
    return context


def final_value(text: str) -> str | None:
    """The answer a dependant sees: the extracted final answer, written as a plain number when it is one
    (so "25%" and "$1,000" reach the next step, and the exact tool, as the checker reads them)."""
    value = extract_answer(text)
    if value is None:
        return None
    number = to_number(value)
    if number is None or not math.isfinite(number):
        return value
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


async def _ask(team: Team, agent_id: str, prompt: str, budget: Budget, timeout_s: float) -> AgentAnswer:
    agent = team.agent(agent_id)
    refusal = budget.refusal(agent, prompt)
    if refusal is not None:
        return AgentAnswer(agent_id=agent_id, text="", error=f"BudgetExceeded: {refusal}")
    answer = await call_agent(agent, team.models[agent_id], prompt, timeout_s=timeout_s, retry=team.retry)
    budget.spend(answer.total_tokens, answer.cost_usd)
    team.health.report(answer, lambda text: extract_answer(text) is not None)
    return answer


@dataclass(frozen=True)
class RoutedCandidate:
    """An integration step's tool agent, chosen by rule rather than by the coarse stage."""

    agent: Any
    score: float = 1.0
    components: dict[str, float] = field(default_factory=lambda: {"integration_route": 1.0})
    domain: str | None = None


def is_integration_step(step_id: str, depends_on: Sequence[str]) -> bool:
    """A plan's integration step: its `final` step combining earlier answers (a one-step plan's lone `final`
    step is the whole question, not an integration)."""
    return step_id == FINAL_ID and bool(depends_on)


def _select(team: Team, settings: ReSoSettings, step_id: str, depends_on: Sequence[str], instruction: str,
            k: int) -> list[Any]:
    """The coarse stage, leaving out agents whose endpoint's circuit breaker is open (`team.health`);
    when that leaves nobody, everyone is eligible again. An integration step goes to the pool's exact tool
    when the settings say so, whatever the method: no comparison is then decided by who drew the tool."""
    unavailable = set(team.health.unavailable())
    if settings.integration == "tool":
        tools = team.integration_agents()
        if tools and is_integration_step(step_id, depends_on):
            return [RoutedCandidate(tools[0], domain=tools[0].domain)]
        if step_id != FINAL_ID:
            # Integration is the tools' job then; a sub-question's slots go to agents that can answer it (a
            # one-step plan's lone step may still be a calculation).
            unavailable |= {tool.id for tool in tools}
    if not unavailable:
        return team.selector.select(instruction, k)
    if "exclude" in inspect.signature(team.selector.select).parameters:
        chosen = team.selector.select(instruction, k, exclude=unavailable)
    else:  # a selector without `exclude` (a pinned baseline, a test fake): filter what it returns
        offered = team.selector.select(instruction, k + len(unavailable))
        chosen = [c for c in offered if c.agent.id not in unavailable][:k]
    return chosen or team.selector.select(instruction, k)


def _reward(answer: AgentAnswer, score: Score | None, reference: str | None) -> float:
    """Training reward: the ground-truth rule when the reference is known, else the CRM's score."""
    if not answer.ok:
        return 0.0
    if reference is not None:
        return 1.0 if check_answer(answer.text, reference) else 0.0
    return score.value if score is not None else 0.0


def _judge(team: Team, settings: ReSoSettings, candidates: Sequence[Any], answers: Sequence[AgentAnswer],
           usable: Sequence[int], *, instruction: str, context_text: str, group: str,
           reference: str | None) -> dict[int, Score]:
    """The CRM's verdict on every usable answer, by candidate index."""
    if not usable:
        return {}
    items = [
        ScoreItem(subtask=instruction, answer=answers[i].text, context=context_text,
                  agent_id=candidates[i].agent.id, model=candidates[i].agent.model.spec,
                  reputation=team.reputation(candidates[i].agent.id), group=group,
                  domain=candidates[i].agent.domain, extra={"record": team.model_record(candidates[i].agent.id)},
                  reference=reference if settings.scorer_sees_reference else None)
        for i in usable
    ]
    return dict(zip(usable, team.scorer.score_detailed(items), strict=True))


def _learn(team: Team, settings: ReSoSettings, candidates: Sequence[Any], answers: Sequence[AgentAnswer],
           scores: dict[int, Score], reference: str | None, credit: bool) -> list[float | None]:
    """In training mode, every candidate's reward (failures earn 0) goes to the DADB; a call the budget
    refused was never made and says nothing about the agent, so it is not learned, and neither is a subtask
    whose parents' answers were wrong (`credit` False): its reference assumes right parents, so its
    candidates would be blamed for an earlier agent's mistake."""
    if settings.mode != "train" or not credit:
        return [None] * len(candidates)
    rewards: list[float | None] = []
    for i, (candidate, answer) in enumerate(zip(candidates, answers, strict=True)):
        if (answer.error or "").startswith("BudgetExceeded"):
            rewards.append(None)
            continue
        reward = _reward(answer, scores.get(i), reference)
        team.selector.update(candidate.agent.id, reward, answer.cost_usd, answer.total_tokens,
                             domain=getattr(candidate, "domain", None))
        rewards.append(reward)
    return rewards


def _reliabilities(team: Team, offered: Sequence[Any]) -> list[float] | None:
    """How often each offered candidate's model was right in training (None without a DADB)."""
    records = [team.model_record(c.agent.id) for c in offered]
    if any(record is None for record in records):
        return None
    return [record_reliability(*record) for record in records if record is not None]


def _seen(asked: Sequence[int], values: Sequence[str | None], scores: Mapping[int, Score]) -> list[Asked]:
    """What the asking policy is shown: each answer's offered index, final value and score."""
    return [Asked(index, values[j], scores[j].value if j in scores else None) for j, index in enumerate(asked)]


async def run_subtask(
    team: Team,
    settings: ReSoSettings,
    *,
    step_id: str,
    instruction: str,
    depends_on: Sequence[str],
    context: Sequence[ContextAnswer],
    budget: Budget,
    reference: str | None = None,
    clock_origin: float | None = None,
    write: ProgressWriter | None = None,
    credit: bool = True,
) -> StepRecord:
    """Answer one subtask with the team and return its record (`credit` False: learn nothing from it)."""
    origin = clock_origin if clock_origin is not None else time.monotonic()
    started = time.monotonic() - origin
    emit = write or (lambda event: None)
    emit({"event": "subtask_started", "id": step_id})
    prompt = render_subtask_prompt(instruction, context)
    policy = team.asking or policy_for(settings.k_max, settings.confidence)
    offered = await asyncio.to_thread(_select, team, settings, step_id, depends_on, instruction,
                                      policy.pool_size(settings.k))
    emit({"event": "candidates", "id": step_id,
          "candidates": [{"agent": c.agent.id, "score": c.score} for c in offered]})
    context_text = "\n".join(f"Answer[{c.id}] = {c.value}" for c in context)
    # Candidates answer in stages when the policy asks for more after seeing the scores (adaptive fine
    # stage, cascade); `asked` keeps the offered indices in the order they answered.
    asked: list[int] = []
    answers: list[AgentAnswer] = []
    values: list[str | None] = []
    scores: dict[int, Score] = {}
    pending = policy.first(offered, settings.k)
    reliabilities: list[list[float] | None] = []

    def reliability() -> list[float] | None:  # read once, when the policy first asks
        if not reliabilities:
            reliabilities.append(_reliabilities(team, offered))
        return reliabilities[0]

    while pending:
        fresh = await asyncio.gather(*(_ask(team, offered[i].agent.id, prompt, budget, settings.call_timeout_s)
                                       for i in pending))
        asked.extend(pending)
        answers.extend(fresh)
        values.extend(final_value(a.text) if a.ok else None for a in fresh)
        candidates = [offered[i] for i in asked]
        usable = [i for i, answer in enumerate(answers) if answer.ok]
        # Scoring touches the DADB and may run models: one thread hop, off the event loop.
        scores = await asyncio.to_thread(_judge, team, settings, candidates, answers, usable,
                                         instruction=instruction, context_text=context_text, group=step_id,
                                         reference=reference)
        if len(asked) == len(offered):  # nobody left to ask (always so for the paper's fixed k)
            break
        # The policy may read the DADB (through `reliability`): one thread hop, off the event loop.
        more = await asyncio.to_thread(policy.more, offered, _seen(asked, values, scores), reliability)
        pending = [i for i in more if 0 <= i < len(offered) and i not in asked]
    candidates = [offered[i] for i in asked]
    usable = [i for i, answer in enumerate(answers) if answer.ok]
    rewards = await asyncio.to_thread(_learn, team, settings, candidates, answers, scores, reference, credit)
    records = [
        CandidateRecord(
            agent_id=candidate.agent.id, model=candidate.agent.model.spec, role=candidate.agent.role,
            answer=answer.text, value=values[i],
            score=scores[i].value if i in scores else None,
            score_reason=scores[i].reason if i in scores else None,
            reward=rewards[i], domain=getattr(candidate, "domain", None), selection=dict(candidate.components),
            input_tokens=answer.input_tokens, output_tokens=answer.output_tokens,
            cost_usd=answer.cost_usd, latency_s=answer.latency_s, error=answer.error, retries=answer.retries,
        )
        for i, (candidate, answer) in enumerate(zip(candidates, answers, strict=True))
    ]
    # The policy may name the answer to keep (the cascade); otherwise the best CRM score wins among answers
    # with a final value, ties keeping the coarse stage's order (candidates arrive best first).
    chosen = policy.keep(_seen(asked, values, scores))
    if chosen is not None and chosen in asked:
        best: int | None = asked.index(chosen)
    else:
        best = max(usable, key=lambda i: (records[i].value is not None, scores[i].value, -i)) if usable else None
    kept = records[best] if best is not None else None
    record = StepRecord(
        id=step_id, instruction=instruction, depends_on=list(depends_on),
        status="done" if kept is not None and kept.value is not None else "failed",
        agent=kept.agent_id if kept else None, answer=kept.answer if kept else "",
        value=kept.value if kept else None, candidates=records,
        started_s=started, finished_s=time.monotonic() - origin,
        notes=[] if kept else ["no candidate produced a usable answer"],
    )
    emit({"event": "subtask_done", "id": step_id, "status": record.status, "agent": record.agent,
          "value": record.value})
    return record
