"""The rule scorer: 1/0 against a known reference, 0 with a reason when it cannot judge."""

from __future__ import annotations

import pytest

from reso.reward.base import ScoreItem
from reso.reward.rule import RuleScorer


def _item(answer: str, reference: str | None) -> ScoreItem:
    return ScoreItem(subtask="How much does she make?", answer=answer, reference=reference)


def test_scores_one_for_a_matching_answer_and_zero_otherwise() -> None:
    scores = RuleScorer().score_detailed(
        [
            _item("She makes 9 * $2 = $18 every day.", "18"),
            _item(r"So the total is \boxed{\$18.00}.", "18"),
            _item("#### 19", "18"),
            _item(r"\boxed{\dfrac{1}{2}}", "0.5"),
        ]
    )
    assert [score.value for score in scores] == [1.0, 1.0, 0.0, 1.0]
    assert scores[0].reason is None
    assert scores[2].reason == "answer '19' does not match the reference '18'"


def test_bad_answers_and_missing_references_score_zero_with_a_reason() -> None:
    scores = RuleScorer().score_detailed(
        [_item("", "18"), _item("I cannot tell.", "18"), _item("#### 18", None), _item("#### 18", "  ")]
    )
    assert [(score.value, score.reason) for score in scores] == [
        (0.0, "empty answer"),
        (0.0, "no final answer found"),
        (0.0, "no reference"),
        (0.0, "no reference"),
    ]


def test_tolerance_is_a_setting() -> None:
    item = _item("The answer is 101.", "100")
    assert RuleScorer().score([item]) == [1.0]
    assert RuleScorer(rel_tol=0.0).score([item]) == [0.0]
    with pytest.raises(ValueError, match="rel_tol"):
        RuleScorer(rel_tol=-0.1)
