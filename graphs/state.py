"""The state of the top-level ReSo graph (plan → execute → answer), with its input and output views, and
the state of one question's task-DAG graph (`DagState`).

The bottom of the graph modules: of `reso.graphs` it imports only the records (`reso.graphs.run_records`); the
graphs built on it (`reso.graphs.compile`, `reso.graphs.graph`) import it.

The state holds plain data only (JSON: str, numbers, lists, dicts), so that a checkpoint never asks a
serializer to revive a class of ours: LangGraph's default one warns "Deserializing unregistered type …" on
every class it was not given and will refuse them in a later version, and `langgraph dev` (Studio) reads its
checkpoints with that default (langgraph-api 0.16 takes no msgpack allowlist from langgraph.json). Nodes work
on models and convert at the state's edge: `reso.graphs.graph.state_dag` and
`reso.graphs.run_records.step_records` read, `TaskDAG`'s `model_dump` and `reso.graphs.run_records.state_steps` write.

The plan is kept twice, for two readers: `dag`, the validated `TaskDAG`'s JSON every node works from, and
`plan`, its steps for callers and Studio; `plan_mermaid` draws it (`reso.graphs.mermaid`), with each
subtask's outcome once it has run. `steps` holds each subtask's `StepRecord` as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from reso.graphs.run_records import StepJSON


def merge_steps(left: Mapping[str, StepJSON] | None,
                right: Mapping[str, StepJSON] | None) -> dict[str, StepJSON]:
    """Reducer: subtask records keyed by id; a later record for the same id replaces the earlier one."""
    return {**(left or {}), **(right or {})}


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
    steps: dict[str, StepJSON]
    usage: dict[str, Any]
    latency_s: float
    notes: list[str]


class ReSoState(InputState, OutputState, total=False):
    """Everything the graph tracks for one question."""

    steps: Annotated[dict[str, StepJSON], merge_steps]
    notes: Annotated[list[str], keep_notes]
    started_at: float
    dag: dict[str, Any]
    budget_exceeded: bool


def state_serializer() -> JsonPlusSerializer:
    """The serializer of this graph's checkpoints: LangGraph's, reviving only its own safe types (the state
    holds plain data; any class is blocked and read back as its data)."""
    return JsonPlusSerializer(allowed_msgpack_modules=None)


class DagState(TypedDict, total=False):
    """State of one question's task-DAG graph (`reso.graphs.compile`): the subtask records finished so far,
    by id, as JSON."""

    steps: Annotated[dict[str, StepJSON], merge_steps]
