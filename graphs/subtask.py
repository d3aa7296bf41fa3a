"""One subtask, start to finish (`Subtask.run`): prompt, coarse selection, the fine stage
(`reso.graphs.fine_stage`), the reward of every candidate (training mode, sent the run learner's way:
`reso.graphs.learning.Learner`) and the subtask's record.

Failures stay local: a candidate that errors, times out or is refused by the budget is recorded with
its error and its kind and left out of scoring; a subtask with no usable answer is marked failed and its
dependants still run, told that this answer is unknown.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reso.agents.adapters.answers import AgentAnswer
from reso.agents.adapters.prompting import ContextAnswer, render_subtask_prompt
from reso.agents.selection.candidate_score import Rule, RuleChoice
from reso.agents.selection.selector import Candidate
from reso.agents.selection.stats_cache import Standings
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.dag import StepRole
from reso.graphs.escalation import policy_for
from reso.graphs.fine_stage import Judged, run_fine_stage
from reso.graphs.learning import candidate_updates
from reso.graphs.plan_settings import Integration
from reso.graphs.run_records import CandidateRecord, StepRecord, StepStatus
from reso.reward.answers import check_answer
from reso.reward.base import Score
from reso.reward.peer_posterior import peer_errors

ProgressWriter = Callable[[dict[str, Any]], None]
MIN_VALUE_USD = 1e-12
"""What a step's right answer is worth at least: a question already lost still gets an answer, the cheapest."""


def context_for(visible: Sequence[str], steps: Mapping[str, StepRecord]) -> list[ContextAnswer]:
    """The earlier answers a subtask is shown, in the order given by `visible`."""
    return [ContextAnswer(id=earlier_id, instruction=steps[earlier_id].instruction, value=steps[earlier_id].value,
                          answer_text=steps[earlier_id].answer, failed=steps[earlier_id].status != StepStatus.DONE)
            for earlier_id in visible]


@dataclass(frozen=True)
class Subtask:
    """One subtask of a question, as its run hands it over: what it asks, the earlier answers it is shown,
    its reference (training) and whether it is credited (False when a parent was answered wrong: its
    reference assumes right parents, so its candidates would be blamed for an earlier agent's mistake)."""

    id: str
    instruction: str
    role: StepRole
    depends_on: Sequence[str] = ()
    context: Sequence[ContextAnswer] = ()
    reference: str | None = None
    credit: bool = True
    standing: float = 1.0
    """The chance that the sub-questions this one depends on were answered right
    (`reso.graphs.run.DagRun.standing`): a right answer here is worth the question's value times this."""

    def answer_value(self, question_value: float) -> float:
        """What a right answer here is worth: the question's value times `standing`, never below
        `MIN_VALUE_USD`, and infinite when the question's is (price then counts for nothing, doubt or not)."""
        if math.isinf(question_value):
            return question_value
        return max(question_value * self.standing, MIN_VALUE_USD)

    async def run(self, question: QuestionRun) -> StepRecord:
        """Answer this subtask with the run's team within the question's budget; returns its record."""
        run = question.run
        settings = run.settings
        started = time.monotonic() - question.origin
        emit = question.write or (lambda event: None)
        emit({"event": "subtask_started", "id": self.id})
        prompt = render_subtask_prompt(self.instruction, self.context)
        team = run.require_team()
        policy = team.asking or policy_for(
            settings.asking, errors=peer_errors(team.scorer),
            answer_value_usd=self.answer_value(settings.answer_value_usd), discrimination=team.scorer.discrimination)
        offered, standings = await asyncio.to_thread(self._coarse_stage, run, policy.slate_size(settings.asking.k))
        emit({"event": "candidates", "id": self.id,
              "candidates": [{"agent": c.agent.id, "score": c.score} for c in offered]})
        judged = await run_fine_stage(run, offered, policy, prompt=prompt, instruction=self.instruction,
                                      context_text="\n".join(f"Answer[{c.id}] = {c.value}" for c in self.context),
                                      group=self.id, reference=self.reference, budget=question.budget,
                                      standings=standings)
        learner = run.learner
        if learner.writes_as_they_go and self.credit:  # the selector's updates write to the DADB: off the loop
            records = await asyncio.to_thread(self._learn, run, judged)
        else:
            records = self._learn(run, judged)
        kept = records[judged.kept] if judged.kept is not None else None
        record = StepRecord(
            id=self.id, instruction=self.instruction, depends_on=list(self.depends_on),
            status=StepStatus.DONE if kept is not None and kept.value is not None else StepStatus.FAILED,
            agent=kept.agent_id if kept else None, answer=kept.answer if kept else "",
            value=kept.value if kept else None, candidates=records,
            started_s=started, finished_s=time.monotonic() - question.origin,
            notes=[] if kept else ["no candidate produced a usable answer"],
        )
        emit({"event": "subtask_done", "id": self.id, "status": record.status, "agent": record.agent,
              "value": record.value})
        return record

    def _select(self, run: RunContext, k: int) -> list[Candidate]:
        """The coarse stage, leaving out agents whose endpoint's circuit breaker is open (`team.health`);
        when that leaves nobody, everyone is eligible again. An integration step goes to the pool's exact
        tool when the settings say so, whatever the method: no comparison is then decided by who drew the
        tool."""
        team = run.require_team()
        unavailable = set(team.health.unavailable())
        if run.settings.plan.integration == Integration.TOOL:
            tools = team.integration_agents()
            if tools and self.role is StepRole.INTEGRATION:
                route = RuleChoice(Rule.INTEGRATION_ROUTE)
                return [Candidate(tools[0], 1.0, domain=tools[0].domain, rule=route)]
            if self.role is StepRole.SUB_QUESTION:
                # Integration is the tools' job then; a sub-question's slots go to agents that can answer it
                # (a one-step plan's lone step may still be a calculation).
                unavailable |= {tool.id for tool in tools}
        if not unavailable:
            return team.selector.select(self.instruction, k)
        return (team.selector.select(self.instruction, k, exclude=unavailable)
                or team.selector.select(self.instruction, k))

    def _coarse_stage(self, run: RunContext, k: int) -> tuple[list[Candidate], Standings | None]:
        """The candidates (`_select`) and the agents' standings the fine stage judges them by, read together
        in one trip off the event loop: both may read the DADB."""
        return self._select(run, k), run.require_team().standings()

    def _learn(self, run: RunContext, judged: Judged) -> list[CandidateRecord]:
        """The candidates' records, each with its reward when the run learns (`Learner.rewards`) and this
        subtask is credited; those rewards then go the run learner's way (`Learner.update`). A failed call
        earns 0; a call the budget refused was never made, and a replay agent without a recording gave no
        answer: neither says anything about the agent, so they earn none (`FailureKind.unlearned`)."""
        if not (run.learner.rewards and self.credit):
            return _candidate_records(judged, [None] * len(judged.candidates))
        rewards = [None if answer.failure is not None and answer.failure.unlearned
                   else _reward(answer, judged.scores.get(i), self.reference)
                   for i, answer in enumerate(judged.answers)]
        records = _candidate_records(judged, rewards)
        run.learner.update(run.require_team().selector, candidate_updates(records))
        return records


class QuestionRun(Protocol):
    """What a subtask needs of its question's run (`reso.graphs.run.DagRun`)."""

    @property
    def run(self) -> RunContext: ...

    @property
    def budget(self) -> Budget: ...

    @property
    def origin(self) -> float:
        """The question's clock origin (`time.monotonic()`): a record's times count from it."""
        ...

    @property
    def write(self) -> ProgressWriter | None: ...


def _reward(answer: AgentAnswer, score: Score | None, reference: str | None) -> float:
    """Training reward: the ground-truth rule when the reference is known, else the CRM's score."""
    if not answer.ok:
        return 0.0
    if reference is not None:
        return 1.0 if check_answer(answer.text, reference) else 0.0
    return score.value if score is not None else 0.0


def _candidate_records(judged: Judged, rewards: Sequence[float | None]) -> list[CandidateRecord]:
    scores = judged.scores
    return [
        CandidateRecord(
            agent_id=candidate.agent.id, model=candidate.agent.model.spec, role=candidate.agent.role,
            answer=answer.text, value=judged.values[i],
            score=scores[i].value if i in scores else None,
            score_reason=scores[i].reason if i in scores else None,
            score_failed=i in scores and scores[i].failed,
            reward=rewards[i], domain=candidate.domain, selection=candidate.selection_record(),
            input_tokens=answer.input_tokens, output_tokens=answer.output_tokens, cost_usd=answer.cost_usd,
            latency_s=answer.latency_s, error=answer.error, failure=answer.failure, retries=answer.retries,
        )
        for i, (candidate, answer) in enumerate(zip(judged.candidates, judged.answers, strict=True))
    ]


