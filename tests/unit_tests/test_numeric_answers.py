"""Answers read as exact numbers: plain numbers, and LaTeX fractions through math-verify; anything
irrational, symbolic or a percentage is refused rather than approximated."""

from __future__ import annotations

from fractions import Fraction

import pytest

from reso.evals.datasets.numeric import json_number, parse_exact_answer


@pytest.mark.parametrize(("answer", "value"), [
    ("-15", Fraction(-15)),
    ("1,000", Fraction(1000)),
    (18, Fraction(18)),
    ("2.5", Fraction(5, 2)),
    ("\\frac{3}{4}", Fraction(3, 4)),
    ("-\\dfrac{7}{2}", Fraction(-7, 2)),
    ("\\tfrac{6}{4}", Fraction(3, 2)),
    ("1/3", Fraction(1, 3)),
    ("$\\frac{10}{3}$", Fraction(10, 3)),
])
def test_exact_answers(answer: object, value: Fraction) -> None:
    assert parse_exact_answer(answer) == value


@pytest.mark.parametrize("answer", [
    "5\\sqrt{2}", "\\frac{\\pi}{2}", "\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\%", "0.\\overline{3}", "\\text{(B)}",
    "x/2", "(1,2)", "nan", "inf", None, [1, 2], "",
])
def test_inexact_or_non_numeric_answers_are_refused(answer: object) -> None:
    with pytest.raises(ValueError, match="number"):
        parse_exact_answer(answer)


def test_json_numbers_are_ints_when_whole() -> None:
    assert json_number(Fraction(12)) == 12 and isinstance(json_number(Fraction(12)), int)
    assert json_number(Fraction(3, 4)) == 0.75
