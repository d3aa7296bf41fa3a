"""What a run reports: per-candidate and per-subtask records, usage totals and the final result.

Code works on these pydantic models, from the subtask that makes them to the caller. Graph state holds
subtask records as plain JSON (`state_steps`), so that no checkpointer, Studio's (`langgraph dev`) included,
ever has a class of ours to revive; `step_records` reads them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reso.agents.adapters.failures import FailureKind


class StepStatus(StrEnum):
    """How a subtask ended."""

    DONE = "done"
    """A candidate's answer with a value was kept."""
    FAILED = "failed"
    """No candidate produced a usable answer (its dependants still run, told the answer is unknown)."""
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    """How a question's run ended (`Result.status`); graph state holds the value, plain text."""

    DONE = "done"
    FAILED = "failed"
    BUDGET_EXCEEDED = "budget_exceeded"
    AWAITING_REVIEW = "awaiting_review"


class CandidateRecord(BaseModel):
    """One candidate agent's attempt at a subtask."""

    agent_id: str
    model: str
    role: str
    answer: str = ""
    value: str | None = Field(default=None, description="The final answer extracted from `answer`.")
    score: float | None = Field(default=None, description="The CRM's score of the answer, in [0, 1].")
    score_reason: str | None = None
    score_failed: bool = Field(default=False, description=(
        "The scorer could not judge the answer: `score` is the neutral value, `score_reason` says why."))
    reward: float | None = Field(default=None, description="Reward sent to the DADB (training mode).")
    domain: str | None = Field(default=None, description="The DADB domain row the reward went to.")
    selection: dict[str, float] = Field(default_factory=dict, description="Coarse-stage score components.")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = Field(default=None, description="Why the call failed, for people.")
    failure: FailureKind | None = Field(default=None, description="The kind of failure, for code.")
    retries: int = Field(default=0, description="Extra attempts spent on transient failures (timeouts, 429, 5xx).")


class StepRecord(BaseModel):
    """One subtask: who was asked, what each said, which answer was kept."""

    # The status is validated as a `StepStatus` and kept as its text, as it always was: a record that a
    # checkpoint holds as a model carries no enum that LangGraph's serializer would have to revive.
    model_config = ConfigDict(use_enum_values=True)

    id: str
    instruction: str
    depends_on: list[str] = Field(default_factory=list)
    status: StepStatus = Field(default=StepStatus.DONE, validate_default=True)
    agent: str | None = None
    answer: str = ""
    value: str | None = None
    candidates: list[CandidateRecord] = Field(default_factory=list)
    started_s: float = 0.0
    finished_s: float = 0.0
    notes: list[str] = Field(default_factory=list)

    @property
    def latency_s(self) -> float:
        return self.finished_s - self.started_s

    @property
    def kept_score(self) -> float:
        """The scorer's value for the kept answer (its probability of being right, with a calibrated
        scorer); 0 when no answer was kept."""
        if self.value is None:
            return 0.0
        return max((c.score for c in self.candidates if c.agent_id == self.agent and c.score is not None),
                   default=0.0)


StepRecords = dict[str, StepRecord]
StepJSON = dict[str, Any]
"""A `StepRecord` as graph state holds it: `record.model_dump(mode="json")`."""


def state_steps(records: Mapping[str, StepRecord]) -> dict[str, StepJSON]:
    """Subtask records by id as graph state keeps them: JSON, which every checkpointer saves and reads back
    as it is (LangGraph's serializer warns about, or blocks, reviving a class it was not told about)."""
    return {step_id: record.model_dump(mode="json") for step_id, record in records.items()}


def step_records(steps: Mapping[str, StepJSON] | None) -> StepRecords:
    """Subtask records by id, validated from the state's JSON."""
    return {step_id: StepRecord.model_validate(record) for step_id, record in (steps or {}).items()}


class Usage(BaseModel):
    """Token, call and cost totals."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @classmethod
    def of_steps(cls, steps: Iterable[StepRecord]) -> Usage:
        usage = cls()
        for step in steps:
            for candidate in step.candidates:
                usage.calls += 1
                usage.input_tokens += candidate.input_tokens
                usage.output_tokens += candidate.output_tokens
                usage.cost_usd += candidate.cost_usd
        return usage

    def to_json(self) -> dict[str, Any]:
        return {**self.model_dump(), "total_tokens": self.total_tokens}


class Result(BaseModel):
    """The answer to one question, with the plan and everything that happened on the way."""

    question: str
    answer: str | None
    answer_text: str = ""
    plan: list[dict[str, Any]]
    steps: list[StepRecord]
    usage: Usage
    latency_s: float
    status: RunStatus = RunStatus.DONE
    notes: list[str] = Field(default_factory=list)
    thread_id: str | None = Field(default=None, description="The run's thread, to resume it.")

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> Result:
        """The result a graph state stands for. Its usage is the one the graph's `answer` node totalled
        (`Usage.of_steps`), read, not totalled again; for a state that node has not reached (a run paused
        for review, or stopped before its answer) it is the total of the steps the state holds."""
        plan = list(state.get("plan") or [])
        records = step_records(state.get("steps"))
        steps = [records[step["id"]] for step in plan if step["id"] in records]
        return cls(
            question=state.get("question", ""),
            answer=state.get("answer"),
            answer_text=state.get("answer_text", ""),
            plan=plan,
            steps=steps,
            usage=Usage.model_validate(state["usage"]) if state.get("usage") else Usage.of_steps(steps),
            latency_s=float(state.get("latency_s", 0.0)),
            status=state.get("status", RunStatus.DONE),
            notes=list(state.get("notes") or []),
            thread_id=state.get("thread_id"),
        )

    def to_json(self) -> dict[str, Any]:
        """The `reso solve --json` object."""
        return {
            "question": self.question,
            "answer": self.answer,
            "status": self.status,
            "plan": self.plan,
            "steps": [
                {**step.model_dump(exclude={"instruction", "depends_on"}), "latency_s": step.latency_s}
                for step in self.steps
            ],
            "usage": self.usage.to_json(),
            "latency_s": self.latency_s,
            "notes": self.notes,
        }
