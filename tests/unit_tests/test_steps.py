"""The step verifier: which written equations it finds, how it re-checks them, and how it scores."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from reso.reward.base import ScoreItem
from reso.reward.steps import NEUTRAL, StepVerifierScorer, evaluate, find_steps, step_stats


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("16 - 3 = 13", (1, 1)),
        ("9 * $2 = $18", (1, 1)),
        ("<<9*2=18>>", (1, 1)),
        ("3 + 4 = 7 eggs", (1, 1)),
        (r"$4 \times 5 = 20$", (1, 1)),
        ("12/60 = 0.2", (1, 1)),
        (r"$\frac{1}{2} \cdot 8 = 4$", (1, 1)),
        ("150 x $194 = $29,100", (1, 1)),
        ("(1/4) x (1/2) = 1/8", (1, 1)),
        ("1,000 + 2,000 = 3,000", (1, 1)),
        ("4 - 16 = -12", (1, 1)),
        ("2^10 = 1024", (1, 1)),
        ("1. 16 - 3 = 13", (1, 1)),
        ("16 - 3 = 12", (1, 0)),
        ("2 * 27 - 5 = 52 years old", (1, 0)),
        ("She makes 9 * 2 = $<<9*2=18>>18 every day.", (1, 1)),
        ("2 + 3 = 5 * 2 = 10", (2, 2)),
        ("2 + 3 = 6 * 2 = 12", (2, 1)),
        ("x = 5", (0, 0)),
        ("5 = 5", (0, 0)),
        ("In the year 2023 she was 5", (0, 0)),
        ("99% of $5 = 0.99 * $5 = $4.95", (1, 1)),
        ("+ 9 - 9 = 27 - 9", (0, 0)),
        ("10**10**10 = 5", (0, 0)),
        ("__import__('os') = 1", (0, 0)),
    ],
)
def test_step_stats(text: str, expected: tuple[int, int]) -> None:
    assert step_stats(text) == expected


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("10/3 = 3.33", True),
        ("2/3 = 0.67", True),
        ("2/3 = 0.6", False),
        ("7/2 = 3", False),
        ("(4 / 20) * 100 = 20%", True),
        ("0.5 * 0.4 = 20%", True),
        ("1/3 = 33.3%", True),
        ("1/3 = 0.333%", False),
    ],
)
def test_rounded_and_percent_values(text: str, holds: bool) -> None:
    steps = find_steps(text)
    assert [step.holds for step in steps] == [holds]


def test_a_step_and_its_calculator_note_count_once() -> None:
    assert step_stats("By 16:00, 3000 \\* 2/3 = <<3000*(2/3)=2000>>2000 more people voted.") == (1, 1)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1 + 2 * 3", Fraction(7)),
        ("(1 + 2) * 3", Fraction(9)),
        ("0.1 + 0.2", Fraction(3, 10)),
        ("20% * 40", Fraction(8)),
        ("1e400 * 2", Fraction(2 * 10**400)),
        ("-3 ** 2", Fraction(-9)),
        ("2 ** -1", Fraction(1, 2)),
    ],
)
def test_evaluate_is_exact(expression: str, value: Fraction) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    "expression",
    ["1 / 0", "a + 1", "print(1)", "2 ** 1000", "1e999999999 * 2", "(1", "[1, 2]", "1 if 1 else 2", ""],
)
def test_evaluate_refuses_anything_but_plain_arithmetic(expression: str) -> None:
    assert evaluate(expression) is None


def test_scorer_values_and_reasons() -> None:
    scorer = StepVerifierScorer()
    items = [
        ScoreItem(subtask="q", answer="16 - 3 = 13, then 13 - 4 = 9, so 9 * 2 = 18"),
        ScoreItem(subtask="q", answer="16 - 3 = 12, so 12 * 2 = 24"),
        ScoreItem(subtask="q", answer="The answer is 18."),
        ScoreItem(subtask="q", answer="I am not sure."),
        ScoreItem(subtask="q", answer="   "),
    ]
    scores = scorer.score_detailed(items)
    assert scores[0].value == pytest.approx((3 + 0.5) / 4) and scores[0].reason is None
    assert scores[1].value == pytest.approx((1 + 0.5) / 3)
    assert "1 of 2 steps wrong" in scores[1].reason and "16 - 3 = 12" in scores[1].reason
    assert scores[2].value == NEUTRAL and scores[2].reason == "no checkable arithmetic step"
    assert (scores[3].value, scores[3].reason) == (0.0, "no number in the answer")
    assert (scores[4].value, scores[4].reason) == (0.0, "empty answer")


def test_plain_share_without_prior() -> None:
    scores = StepVerifierScorer(prior_weight=0).score([ScoreItem(subtask="q", answer="1 + 1 = 2; 2 + 2 = 5")])
    assert scores == [0.5]


@pytest.mark.parametrize(
    "answer", ["(" * 3000 + "1 = 1", "9" * 5000 + " + 1 = 2", "1=" * 5000, "\x00\x01 2+2=4"]
)
def test_hostile_answers_do_not_raise(answer: str) -> None:
    [score] = StepVerifierScorer().score_detailed([ScoreItem(subtask="q", answer=answer)])
    assert 0.0 <= score.value <= 1.0


def test_invalid_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="prior_weight"):
        StepVerifierScorer(prior_weight=-1)


def test_recorded_answers_with_wrong_steps_are_mostly_wrong(shared_data: Path) -> None:
    path = shared_data / "gsm8k-replay" / "gsm8k_replay_dev.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with_wrong_step = [
        row["correct"][model]
        for row in rows
        for model, text in row["responses"].items()
        if (stats := step_stats(text))[0] > stats[1]
    ]
    everything = [label for row in rows for label in row["correct"].values()]
    # Answers whose arithmetic slips are far more often wrong than the average recorded answer.
    assert len(with_wrong_step) >= 50
    assert sum(with_wrong_step) / len(with_wrong_step) < 0.5 * sum(everything) / len(everything)
