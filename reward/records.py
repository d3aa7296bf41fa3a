"""Labelled answer records: the training and evaluation data of Collaborative Reward Models.

The paper's format is `{instruction, answer, label}`; the project's training runs add the context the
answer was given, the agent and model that wrote it, and the question it belongs to.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LabelledRecord:
    """One candidate answer with a 0/1 label saying whether it was right."""

    instruction: str
    answer: str
    label: int
    context: str = ""
    agent_id: str | None = None
    model: str | None = None
    question_id: str | None = None
    reference: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value not in (None, "")}
