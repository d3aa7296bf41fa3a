"""The dataset item every evaluation consumes (`Problem`) and the error a malformed dataset raises."""

from __future__ import annotations

from dataclasses import dataclass, field


class DatasetError(ValueError):
    """A dataset that cannot be read; the message names the file, the line or item index, and the field."""


@dataclass(frozen=True)
class Problem:
    """One question with its ground truth.

    Attributes:
        id: Stable identifier, unique within its dataset.
        question: The full text a solver receives.
        answer: The ground-truth final answer, as text.
        plan: The ground-truth plan when known: `{"id", "instruction", "depends_on"}` dicts in topological
            order; sub-question ids are the release's "0", "1", …, the integration step's id is "final".
        subtask_answers: Step id → ground-truth answer (the "final" step's is `answer`).
        meta: Source, level, unit, per-step question ids and domains, and other provenance.
    """

    id: str
    question: str
    answer: str
    plan: list[dict] | None = None
    subtask_answers: dict[str, str] | None = None
    meta: dict = field(default_factory=dict)
