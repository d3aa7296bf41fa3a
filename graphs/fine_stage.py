"""The fine stage: the coarse stage's candidates answer concurrently, the CRM scores them, one answer is kept.

The asking policy (`reso.graphs.escalation`) says who answers: the paper's fixed k at once, or in rounds
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

from reso.agents.adapters.answers import AgentAnswer
from reso.agents.adapters.invoke import call_agent
from reso.agents.selection.question_skills import QuestionSkills
from reso.agents.selection.selector import Candidate
from reso.agents.selection.stats_cache import Standings
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


def _score_items(run: RunContext, candidates: Sequence[Candidate], answers: Sequence[AgentAnswer],
                 usable: Sequence[int], standings: Standings | None, *, instruction: str, context_text: str,
                 group: str, reference: str | None) -> list[ScoreItem]:
    """What the CRM is shown of every usable answer, with its agent's standing in the DADB."""
    items = []
    for i in usable:
        agent = candidates[i].agent
        items.append(ScoreItem(
            subtask=instruction, answer=answers[i].text, context=context_text, agent_id=agent.id,
            model=agent.model.model_name, reputation=standings.reputation(agent.id) if standings is not None else None,
            group=group, domain=agent.domain,
            record=standings.model_record(agent.id) if standings is not None else None,
            reference=reference if run.settings.reward.sees_reference else None))
    return items


async def _judge(run: RunContext, items: Sequence[ScoreItem], usable: Sequence[int]) -> dict[int, Score]:
    """The CRM's verdict on every usable answer, by candidate index."""
    if not usable:
        return {}
    scorer = run.require_team().scorer
    # A scorer that may block (a model, a server) is called off the event loop: one thread hop.
    scores = await asyncio.to_thread(scorer.score_detailed, items) if scorer.blocking else scorer.score_detailed(items)
    return dict(zip(usable, scores, strict=True))


def _reliabilities(standings: Standings | None, offered: Sequence[Candidate], skills: QuestionSkills | None,
                   instruction: str) -> list[float] | None:
    """How likely each offered candidate's model is to be right here: its training record (None without a
    DADB), read on the nearest past subtasks when the team has question skills."""
    if standings is None:
        return None
    pooled = [record_reliability(*standings.model_record(c.agent.id)) for c in offered]
    if skills is None:
        return pooled
    by_model = {c.agent.model.model_name: record for c, record in zip(offered, pooled, strict=True)}
    here = skills.estimate_text(instruction, by_model)
    return [here[c.agent.model.model_name] for c in offered]


def _seen(asked: Sequence[int], values: Sequence[str | None], scores: Mapping[int, Score],
          rounds: Sequence[int]) -> list[Asked]:
    """What the asking policy is shown: each answer's offered index, final value, score and round of asking."""
    return [Asked(index, values[j], scores[j].value if j in scores else None, rounds[j])
            for j, index in enumerate(asked)]


async def run_fine_stage(run: RunContext, offered: Sequence[Candidate], policy: AskingPolicy, *, prompt: str,
                         instruction: str, context_text: str, group: str, reference: str | None,
                         budget: Budget, standings: Standings | None = None) -> Judged:
    """Ask the candidates `policy` picks from `offered` (best first), score the answers, keep one.

    `standings` are the agents' records the CRM and the policy see (`Team.standings`, read with the
    coarse stage); without them they are read from the team's DADB here, off the event loop.
    """
    team = run.require_team()
    settings = run.settings
    if standings is None and team.dadb is not None:
        standings = await asyncio.to_thread(team.standings)
    # `asked` keeps the offered indices in the order they answered, `rounds` the round each answered in.
    asked: list[int] = []
    rounds: list[int] = []
    answers: list[AgentAnswer] = []
    values: list[str | None] = []
    scores: dict[int, Score] = {}
    reliabilities: list[list[float] | None] = []

    def reliability() -> list[float] | None:  # worked out once, when the policy first asks
        if not reliabilities:
            reliabilities.append(_reliabilities(standings, offered, team.skills, instruction))
        return reliabilities[0]

    if team.skills is not None:  # embedding and searching the nearest past subtasks: off the event loop
        await asyncio.to_thread(reliability)
    pending = policy.first(offered, settings.asking.k, reliability)
    round_ = 0

    while pending:
        fresh = await asyncio.gather(*(_ask(team, offered[i], prompt, budget, settings.limits.call_timeout_s)
                                       for i in pending))
        asked.extend(pending)
        rounds.extend([round_] * len(pending))
        round_ += 1
        answers.extend(fresh)
        values.extend(final_value(a.text) if a.ok else None for a in fresh)
        candidates = [offered[i] for i in asked]
        usable = [i for i, answer in enumerate(answers) if answer.ok]
        items = _score_items(run, candidates, answers, usable, standings, instruction=instruction,
                             context_text=context_text, group=group, reference=reference)
        scores = await _judge(run, items, usable)
        if len(asked) == len(offered):  # nobody left to ask (always so for the paper's fixed k)
            break
        more = policy.more(offered, _seen(asked, values, scores, rounds), reliability)
        pending = [i for i in more if 0 <= i < len(offered) and i not in asked]
    usable = [i for i, answer in enumerate(answers) if answer.ok]
    chosen = policy.keep(_seen(asked, values, scores, rounds))
    if chosen is not None and chosen in asked:
        kept: int | None = asked.index(chosen)
    else:
        kept = max(usable, key=lambda i: (values[i] is not None, scores[i].value, -i)) if usable else None
    return Judged([offered[i] for i in asked], answers, values, scores, kept)
