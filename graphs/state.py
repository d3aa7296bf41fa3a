"""The state of the top-level ReSo graph (plan → execute → answer), with its input and output views."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from reso.graphs.compile import merge_steps


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
    steps: dict[str, dict[str, Any]]
    usage: dict[str, Any]
    latency_s: float
    notes: list[str]


class ReSoState(InputState, OutputState, total=False):
    """Everything the graph tracks for one question."""

    steps: Annotated[dict[str, dict[str, Any]], merge_steps]
    notes: Annotated[list[str], keep_notes]
    started_at: float
