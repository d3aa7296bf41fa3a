"""The dataset item every evaluation consumes (`Problem`) and the error a malformed dataset raises."""

from __future__ import annotations

from dataclasses import dataclass, field

from reso.graphs.dag import FINAL_ID

# How far a numeric answer may be from the reference and still count as right, relative to the reference.
# 1 % is the SciBench convention, kept for files that do not say: their final answers are products of
# measured quantities, printed rounded. A composite of questions with exact answers (GSM8K's integers,
# MATH's exact numbers) is graded exactly, up to the float printing of fractions.
DEFAULT_REL_TOL = 0.01
EXACT_REL_TOL = 1e-6


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
        rel_tol: The dataset's grading rule: how far (relative to the reference) a numeric answer may be
            and still count as right, for the final answer and every step's.
    """

    id: str
    question: str
    answer: str
    plan: list[dict] | None = None
    subtask_answers: dict[str, str] | None = None
    meta: dict = field(default_factory=dict)
    rel_tol: float = DEFAULT_REL_TOL

    def step_references(self) -> dict[str, str]:
        """Each step's ground truth by step id: the per-step answers when the item has them, else the final
        answer for the step that answers the question (id "final": a plain question's only step, or a
        plan's last), so training, the oracle and the per-step grading see it too."""
        return dict(self.subtask_answers) if self.subtask_answers else {FINAL_ID: self.answer}

    def source_ids(self) -> tuple[str, ...]:
        """The distinct ids of the source questions its sub-questions were built from
        (`meta["step_question_ids"]`, written by the synthesis and the release loader), in plan order; empty
        when the item does not name them."""
        named = (self.meta or {}).get("step_question_ids") or {}
        return tuple(dict.fromkeys(text for value in named.values() if (text := str(value).strip())))
