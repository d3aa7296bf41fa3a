"""Choosing the constant to link in a plain question: only standalone quantities, never LaTeX structure,
decimals, groups, words, ranges, years or indices."""

from __future__ import annotations

import pytest

from reso.evals.synth.constants import choose_constant, integer_tokens, is_safe


def _safe_values(text: str) -> list[int]:
    return [int(text[start:end]) for start, end in integer_tokens(text) if is_safe(text, start, end)]


@pytest.mark.parametrize(("text", "safe"), [
    ("Tom has 5 apples and buys 12 more.", [5, 12]),
    ("A shirt costs $20 and a hat $15.", [20, 15]),
    ("There is a 20% discount on 30 items.", [20, 30]),
    ("Interest of $4\\%$ a year on $\\$ 10$.", [4, 10]),
    ("Compute $\\frac{3}{4} + \\dfrac{12}{7}$ plus 9.", [9]),
    ("Let $x^2 + y^{10} = 25$ and $2^5$.", [25]),
    ("The terms $a_5$, $a_{12}$ and $b _ 3$ sum to 40.", [40]),
    ("Find $\\sqrt{16}$, $\\sqrt[3]{27}$ and $\\binom{8}{3}$ and $\\text{7 cm}$ and 6.", [6]),
    ("Write $\\frac 12$ and $\\sqrt 2$ as decimals, then $3 \\cdot 5$.", [3, 5]),
    ("In 1999 she was 30; by 2020 she had 2100 coins and 999 stamps.", [30, 999]),
    ("It costs 3.5 dollars, 0.25 more, or .75 less; pay 8.", [8]),
    ("The town has 1,000 people and 18,\\!632 cars but 7 buses.", [7]),
    ("Use 2x, x2, the 2nd, 3x more, a 3-day trip, and 4 boxes.", [4]),
    ("Pages 3-7 and 10–12 were read, also 5 others.", [5]),
    ("Answer part (2) and #3 first, then the 5th term, term 6, Problem 4 and 9 more.", [9]),
    ("A temperature of -5 or +8 degrees, or 6.", [6]),
    ("Values 0, 1, 007 and 3 were seen.", [3]),
    ("At 3:30 we saw 2/3 of the 10! arrangements and 6 more.", [6]),
    ("In base 10 and base $3$, as $1011_2$ or 5.", [3, 5]),
    ("The set $\\{2, 4\\}$ has 2 elements.", [2]),
    ("[asy]draw((0,0)--(4,5));label(\"7\",(2,2));[/asy] The side is 8.", [8]),
    ("A 10 mile run for $33\\frac{1}{3}$ minutes.", [10]),
    ("Find $n \\pmod 6$ where $n \\equiv 15$ and $n < 10^{6}$.", [15]),
    ("His 12345678901234 grains weigh 40 kg.", [40]),
])
def test_only_standalone_quantities_are_safe(text: str, safe: list[int]) -> None:
    assert _safe_values(text) == safe


@pytest.mark.parametrize(("text", "value", "digits"), [
    ("Tom has 5 apples, 5 pears and 12 plums.", 12, (30, 32)),  # 5 occurs twice: the unique 12 wins
    ("Tom has 5 apples and 5 pears.", 5, (8, 9)),  # no unique one: the first safe one
    ("She ran 2 miles, then 2 more, and 3 laps of $x^3$.", 2, (8, 9)),  # 3 also occurs in x^3
    ("A robe takes 2 bolts of fiber.", 2, (13, 14)),
])
def test_choice_prefers_a_value_that_occurs_once_then_text_order(text: str, value: int,
                                                                 digits: tuple[int, int]) -> None:
    constant = choose_constant(text)
    assert constant is not None
    assert (constant.value, (constant.start, constant.end)) == (value, digits)
    assert text[constant.start:constant.end] == str(constant.value)


@pytest.mark.parametrize("text", [
    "Find the sum of all integers that satisfy $|x|+1>7\\text{ and }|x+1|\\le7$.",
    "What is $\\frac{1}{2}$ of $x^2$?",
    "In 2015 the 1st and 3rd runners tied.",
    "No numbers here.",
])
def test_questions_without_a_safe_number_have_no_constant(text: str) -> None:
    assert choose_constant(text) is None
