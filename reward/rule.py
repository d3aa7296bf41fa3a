"""Rule scorer: 1 when the candidate's final answer equals the known ground truth, else 0.

This is the training-mode reward (the authors' release used a 5 % relative rule; here the tolerance is
a setting, 1 % by default). Items without a reference score 0 with the reason "no reference", so a
misconfigured run shows up in the trace instead of crashing mid-question.
"""

from __future__ import annotations

from collections.abc import Sequence

from reso.reward.answers import answers_match, extract_answer
from reso.reward.base import Score, ScoreItem, Scorer


class RuleScorer(Scorer):
    """Scores 1.0 when `extract_answer(item.answer)` matches `item.reference`, else 0.0."""

    name = "rule"

    def __init__(self, *, rel_tol: float = 0.01) -> None:
        """Configure the rule.

        Args:
            rel_tol: Relative tolerance for numeric answers (see `reso.reward.answers.answers_match`).
        """
        if not 0 <= rel_tol < 1:
            raise ValueError(f"rel_tol must be in [0, 1), got {rel_tol}")
        self.rel_tol = rel_tol

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [self._score_one(item) for item in items]

    def _score_one(self, item: ScoreItem) -> Score:
        if item.reference is None or not str(item.reference).strip():
            return Score(0.0, "no reference")
        if not isinstance(item.answer, str) or not item.answer.strip():
            return Score(0.0, "empty answer")
        predicted = extract_answer(item.answer)
        if predicted is None:
            return Score(0.0, "no final answer found")
        if answers_match(predicted, str(item.reference), rel_tol=self.rel_tol):
            return Score(1.0)
        return Score(0.0, f"answer {predicted!r} does not match the reference {str(item.reference)!r}")
