"""The fine stage: the coarse stage's candidates answer concurrently, the CRM scores them, one answer is kept.

The asking policy (`reso.graphs.escalation`) says who answers: the paper's fixed k at once, or in stages
(adaptive, cascade) where the policy sees the scores so far before asking more. Every usable answer is
scored by the team's CRM; the kept answer is the one the policy names, else the best-scored among those
with a final value (ties keep the coarse stage's order, best first). A call the budget refuses is recorded
as a failed answer and never made.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reso.agents.answers import AgentAnswer
from reso.agents.invoke import call_agent
from reso.agents.selector import Candidate
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.escalation import Asked, AskingPolicy
from reso.graphs.team import Team
from reso.reward.answers import extract_answer, to_number
from reso.reward.base import Score, ScoreItem
from reso.reward.reliability_vote import record_reliability


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


@dataclass(frozen=True)
class Judged:
    """What the fine stage saw: the candidates that answered (in the order they were asked), their answers,
    final values and CRM scores (by index, for usable answers), and the index of the kept answer."""

    candidates: list[Candidate]
    answers: list[AgentAnswer]
    values: list[str | None]
    scores: dict[int, Score]
    kept: int | None


async def _ask(team: Team, candidate: Candidate, prompt: str, budget: Budget, timeout_s: float) -> AgentAnswer:
    agent = candidate.agent
    refusal = budget.refusal(agent, prompt)
    if refusal is not None:
        return AgentAnswer(agent_id=agent.id, text="", error=f"BudgetExceeded: {refusal.reason}",
                           failure=refusal.kind)
    answer = await call_agent(agent, team.models[agent.id], prompt, timeout_s=timeout_s, retry=team.retry)
    budget.spend(answer.total_tokens, answer.cost_usd)
    team.health.report(answer, lambda text: extract_answer(text) is not None)
    return answer


def _judge(run: RunContext, candidates: Sequence[Candidate], answers: Sequence[AgentAnswer],
           usable: Sequence[int], *, instruction: str, context_text: str, group: str,
           reference: str | None) -> dict[int, Score]:
    """The CRM's verdict on every usable answer, by candidate index."""
    if not usable:
        return {}
    team = run.require_team()
    items = [
        ScoreItem(subtask=instruction, answer=answers[i].text, context=context_text,
                  agent_id=candidates[i].agent.id, model=candidates[i].agent.model.spec,
                  reputation=team.reputation(candidates[i].agent.id), group=group,
                  domain=candidates[i].agent.domain, extra={"record": team.model_record(candidates[i].agent.id)},
                  reference=reference if run.settings.scorer_sees_reference else None)
        for i in usable
    ]
    return dict(zip(usable, team.scorer.score_detailed(items), strict=True))


def _reliabilities(team: Team, offered: Sequence[Candidate]) -> list[float] | None:
    """How often each offered candidate's model was right in training (None without a DADB)."""
    records = [team.model_record(c.agent.id) for c in offered]
    if any(record is None for record in records):
        return None
    return [record_reliability(*record) for record in records if record is not None]


def _seen(asked: Sequence[int], values: Sequence[str | None], scores: Mapping[int, Score]) -> list[Asked]:
    """What the asking policy is shown: each answer's offered index, final value and score."""
    return [Asked(index, values[j], scores[j].value if j in scores else None) for j, index in enumerate(asked)]


async def run_fine_stage(run: RunContext, offered: Sequence[Candidate], policy: AskingPolicy, *, prompt: str,
                         instruction: str, context_text: str, group: str, reference: str | None,
                         budget: Budget) -> Judged:
    """Ask the candidates `policy` picks from `offered` (best first), score the answers, keep one."""
    team = run.require_team()
    settings = run.settings
    # `asked` keeps the offered indices in the order they answered.
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
        fresh = await asyncio.gather(*(_ask(team, offered[i], prompt, budget, settings.call_timeout_s)
                                       for i in pending))
        asked.extend(pending)
        answers.extend(fresh)
        values.extend(final_value(a.text) if a.ok else None for a in fresh)
        candidates = [offered[i] for i in asked]
        usable = [i for i, answer in enumerate(answers) if answer.ok]
        # Scoring touches the DADB and may run models: one thread hop, off the event loop.
        scores = await asyncio.to_thread(_judge, run, candidates, answers, usable, instruction=instruction,
                                         context_text=context_text, group=group, reference=reference)
        if len(asked) == len(offered):  # nobody left to ask (always so for the paper's fixed k)
            break
        # The policy may read the DADB (through `reliability`): one thread hop, off the event loop.
        more = await asyncio.to_thread(policy.more, offered, _seen(asked, values, scores), reliability)
        pending = [i for i in more if 0 <= i < len(offered) and i not in asked]
    usable = [i for i, answer in enumerate(answers) if answer.ok]
    chosen = policy.keep(_seen(asked, values, scores))
    if chosen is not None and chosen in asked:
        kept: int | None = asked.index(chosen)
    else:
        kept = max(usable, key=lambda i: (values[i] is not None, scores[i].value, -i)) if usable else None
    return Judged([offered[i] for i in asked], answers, values, scores, kept)
