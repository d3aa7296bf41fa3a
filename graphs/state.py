"""The state of the top-level ReSo graph (plan → execute → answer), with its input and output views.

The plan is kept twice, for two readers: `dag`, the validated `TaskDAG` every node works on, and `plan`,
its steps as JSON for callers and Studio; `plan_mermaid` draws it (`reso.graphs.mermaid`), with each
subtask's outcome once it has run. Subtask records stay `StepRecord`s.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from reso.graphs.compile import merge_steps
from reso.graphs.dag import TaskDAG
from reso.graphs.records import StepRecord


def keep_notes(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Reducer: notes accumulate across nodes."""
    return [*(left or []), *(right or [])]


class InputState(TypedDict, total=False):
    """What a caller gives: the question, optionally a plan and (training) per-subtask references."""

    question: str
    plan: list[dict[str, Any]]
    references: dict[str, str]


class OutputState(TypedDict, total=False):
    """What a caller gets back."""

    answer: str | None
    answer_text: str
    status: str
    plan: list[dict[str, Any]]
    plan_mermaid: str
    steps: dict[str, StepRecord]
    usage: dict[str, Any]
    latency_s: float
    notes: list[str]


class ReSoState(InputState, OutputState, total=False):
    """Everything the graph tracks for one question."""

    steps: Annotated[dict[str, StepRecord], merge_steps]
    notes: Annotated[list[str], keep_notes]
    started_at: float
    dag: TaskDAG
    budget_exceeded: bool


# The models state holds, for the checkpoint serializer to revive: without an explicit list LangGraph warns
# on every read of a saved run (and, in its strict mode, hands back plain dicts).
STATE_MODELS = (("reso.graphs.records", "StepRecord"), ("reso.graphs.dag", "TaskDAG"))


def state_serializer() -> JsonPlusSerializer:
    """The serializer of this graph's checkpoints: LangGraph's, reviving the state's models."""
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_MODELS)
