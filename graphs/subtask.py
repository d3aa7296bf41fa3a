"""One subtask, start to finish: prompt, coarse selection, the fine stage (`reso.graphs.fine_stage`), the
reward of every candidate (training mode) and the subtask's record.

Failures stay local: a candidate that errors, times out or is refused by the budget is recorded with
its error and its kind and left out of scoring; a subtask with no usable answer is marked failed and its
dependants still run, told that this answer is unknown.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reso.agents.adapters.answers import AgentAnswer
from reso.agents.adapters.prompting import ContextAnswer, render_subtask_prompt
from reso.agents.dadb.base import Mode
from reso.agents.selection.selector import Candidate
from reso.agents.selection.stats_cache import Standings
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.dag import StepRole
from reso.graphs.escalation import policy_for
from reso.graphs.fine_stage import Judged, run_fine_stage
from reso.graphs.records import CandidateRecord, StepRecord, StepStatus
from reso.graphs.settings import Integration
from reso.reward.answers import check_answer
from reso.reward.base import Score
from reso.reward.peer_posterior import peer_errors

ProgressWriter = Callable[[dict[str, Any]], None]


def context_for(visible: Sequence[str], steps: Mapping[str, StepRecord]) -> list[ContextAnswer]:
    """The earlier answers a subtask is shown, in the order given by `visible`."""
    return [ContextAnswer(id=earlier_id, instruction=steps[earlier_id].instruction, value=steps[earlier_id].value,
                          answer_text=steps[earlier_id].answer, failed=steps[earlier_id].status != StepStatus.DONE)
            for earlier_id in visible]


def _select(run: RunContext, role: StepRole, instruction: str, k: int) -> list[Candidate]:
    """The coarse stage, leaving out agents whose endpoint's circuit breaker is open (`team.health`);
    when that leaves nobody, everyone is eligible again. An integration step goes to the pool's exact tool
    when the settings say so, whatever the method: no comparison is then decided by who drew the tool."""
    team = run.require_team()
    unavailable = set(team.health.unavailable())
    if run.settings.integration == Integration.TOOL:
        tools = team.integration_agents()
        if tools and role is StepRole.INTEGRATION:
            return [Candidate(tools[0], 1.0, {"integration_route": 1.0}, domain=tools[0].domain)]
        if role is StepRole.SUB_QUESTION:
            # Integration is the tools' job then; a sub-question's slots go to agents that can answer it (a
            # one-step plan's lone step may still be a calculation).
            unavailable |= {tool.id for tool in tools}
    if not unavailable:
        return team.selector.select(instruction, k)
    return team.selector.select(instruction, k, exclude=unavailable) or team.selector.select(instruction, k)


def _coarse_stage(run: RunContext, role: StepRole, instruction: str,
                  k: int) -> tuple[list[Candidate], Standings | None]:
    """The candidates (`_select`) and the agents' standings the fine stage judges them by, read together in
    one trip off the event loop: both may read the DADB."""
    return _select(run, role, instruction, k), run.require_team().standings()


def _reward(answer: AgentAnswer, score: Score | None, reference: str | None) -> float:
    """Training reward: the ground-truth rule when the reference is known, else the CRM's score."""
    if not answer.ok:
        return 0.0
    if reference is not None:
        return 1.0 if check_answer(answer.text, reference) else 0.0
    return score.value if score is not None else 0.0


def _learn(run: RunContext, judged: Judged, reference: str | None, credit: bool) -> list[float | None]:
    """In training mode, every candidate's reward (failures earn 0), sent to the selector unless the run
    learns once (`RunContext.learn_once`: its owner applies the recorded rewards). A call the budget
    refused was never made and says nothing about the agent, so it is not learned, and neither is a subtask
    whose parents' answers were wrong (`credit` False): its reference assumes right parents, so its
    candidates would be blamed for an earlier agent's mistake."""
    if run.settings.mode != Mode.TRAIN or not credit:
        return [None] * len(judged.candidates)
    selector = run.require_team().selector
    rewards: list[float | None] = []
    for i, (candidate, answer) in enumerate(zip(judged.candidates, judged.answers, strict=True)):
        if answer.failure is not None and answer.failure.never_called:
            rewards.append(None)
            continue
        reward = _reward(answer, judged.scores.get(i), reference)
        if run.learn_once is None:
            selector.update(candidate.agent.id, reward, answer.cost_usd, answer.total_tokens,
                            domain=candidate.domain)
        rewards.append(reward)
    return rewards


def _writes_rewards(run: RunContext, credit: bool) -> bool:
    """Whether `_learn` sends rewards to the selector now (training, credited, no learn-once owner)."""
    return run.settings.mode == Mode.TRAIN and credit and run.learn_once is None


def _candidate_records(judged: Judged, rewards: Sequence[float | None]) -> list[CandidateRecord]:
    scores = judged.scores
    return [
        CandidateRecord(
            agent_id=candidate.agent.id, model=candidate.agent.model.spec, role=candidate.agent.role,
            answer=answer.text, value=judged.values[i],
            score=scores[i].value if i in scores else None,
            score_reason=scores[i].reason if i in scores else None,
            score_failed=i in scores and scores[i].failed,
            reward=rewards[i], domain=candidate.domain, selection=dict(candidate.components),
            input_tokens=answer.input_tokens, output_tokens=answer.output_tokens, cost_usd=answer.cost_usd,
            latency_s=answer.latency_s, error=answer.error, failure=answer.failure, retries=answer.retries,
        )
        for i, (candidate, answer) in enumerate(zip(judged.candidates, judged.answers, strict=True))
    ]


async def run_subtask(
    run: RunContext,
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
    role: StepRole = StepRole.SUB_QUESTION,
) -> StepRecord:
    """Answer one subtask with the run's team and return its record (`credit` False: learn nothing from it;
    `role`: what the step is to its plan, `TaskDAG.role`)."""
    settings = run.settings
    origin = clock_origin if clock_origin is not None else time.monotonic()
    started = time.monotonic() - origin
    emit = write or (lambda event: None)
    emit({"event": "subtask_started", "id": step_id})
    prompt = render_subtask_prompt(instruction, context)
    team = run.require_team()
    policy = team.asking or policy_for(settings.k, settings.k_max, settings.confidence, settings.peer_margin,
                                       settings.escalate_to, peer_errors(team.scorer))
    offered, standings = await asyncio.to_thread(_coarse_stage, run, role, instruction,
                                                 policy.pool_size(settings.k))
    emit({"event": "candidates", "id": step_id,
          "candidates": [{"agent": c.agent.id, "score": c.score} for c in offered]})
    judged = await run_fine_stage(run, offered, policy, prompt=prompt, instruction=instruction,
                                  context_text="\n".join(f"Answer[{c.id}] = {c.value}" for c in context),
                                  group=step_id, reference=reference, budget=budget, standings=standings)
    if _writes_rewards(run, credit):  # the selector's updates write to the DADB: off the event loop
        rewards = await asyncio.to_thread(_learn, run, judged, reference, credit)
    else:
        rewards = _learn(run, judged, reference, credit)
    records = _candidate_records(judged, rewards)
    kept = records[judged.kept] if judged.kept is not None else None
    record = StepRecord(
        id=step_id, instruction=instruction, depends_on=list(depends_on),
        status=StepStatus.DONE if kept is not None and kept.value is not None else StepStatus.FAILED,
        agent=kept.agent_id if kept else None, answer=kept.answer if kept else "",
        value=kept.value if kept else None, candidates=records,
        started_s=started, finished_s=time.monotonic() - origin,
        notes=[] if kept else ["no candidate produced a usable answer"],
    )
    emit({"event": "subtask_done", "id": step_id, "status": record.status, "agent": record.agent,
          "value": record.value})
    return record
