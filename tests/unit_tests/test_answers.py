"""Answer extraction, numeric values and equivalence on the formats models actually write."""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reso.reward.answers import answers_match, check_answer, extract_answer, normalize_answer, to_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"First \boxed{\frac{1}{2}}, then on reflection \boxed{\dfrac{3}{4}}.", r"\frac{3}{4}"),
        (r"So $x = \boxed{\frac{\sqrt{3}}{2}}$.", r"\frac{\sqrt{3}}{2}"),
        (r"\boxed{\left(\frac{1}{2}\right)}", r"(\frac{1}{2})"),
        (r"The answer is therefore \boxed{42}.", "42"),
        (r"\boxed 5", "5"),
        ("The answer is 18.", "18"),
        ("So the final answer is: 7 apples", "7"),
        ("Final Answer: 12", "12"),
        (r"The answer is $\frac{7}{2}$ cups.", r"\frac{7}{2}"),
        ("She makes 9 * $2 = $18.\n#### 18", "18"),
        ("#### $1,000", "1000"),
        ("#### 7 packs and 2 extra glue sticks", "7"),
        ("She has 3 apples and 7 pears left", "7"),
        ("She makes 9 * 2 = $<<9*2=18>>18 every day.", "18"),
        ("The rest, 40 - 24 = 16 people, think horse #12 will win.", "16"),
        ("leaving 4 - 16 = -<<4-16=-12>>12 quarts, which is impossible.", "-12"),
        ("He is left with -5 dollars", "-5"),
        ("It takes 5-7 days", "7"),
        ("Answer: 7\nQuestion: What is 2 + 2?\nAnswer: 4", "7"),
    ],
)
def test_extracts_the_final_answer_from_free_text(text: str, expected: str) -> None:
    assert extract_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "expected", "value"),
    [
        (r"$3.2 \times 10^{-4}$", "3.2e-4", 3.2e-4),
        ("about 3.2e-4 m", "3.2e-4", 3.2e-4),
        ("the answer is 3 x 10^5", "3e5", 3e5),
        (r"\boxed{1,000,000}", "1000000", 1e6),
        ("The answer is 1,000 dollars.", "1000", 1000.0),
        ("it costs $1,234.50.", "1234.5", 1234.5),
        (r"\boxed{\$20.00}", "20", 20.0),
        ("The answer is 50%.", "50%", 50.0),
        (r"\boxed{50\%}", "50%", 50.0),
        ("She makes 18 dollars.", "18", 18.0),
        (r"\boxed{18 \text{ dollars}}", "18", 18.0),
        (r"\boxed{5 \mathrm{~m}}", "5", 5.0),
        (r"The final answer is $5 \mathrm{~m}$.", "5", 5.0),
        (r"\boxed{30^\circ}", "30", 30.0),
        (r"\boxed{2\sqrt{3}}", r"2\sqrt{3}", 2 * math.sqrt(3)),
        ("The answer is 3/4.", "3/4", 0.75),
        (r"\boxed{x = 5}", "5", 5.0),
    ],
)
def test_extracts_numbers_units_and_notations(text: str, expected: str, value: float) -> None:
    answer = extract_answer(text)
    assert answer == expected
    assert to_number(answer) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("1,000", 1000.0),
        ("50%", 50.0),
        (r"\frac{1}{2}", 0.5),
        (r"-\frac{1}{2}", -0.5),
        (r"\dfrac{3}{4}", 0.75),
        (r"3.2 \times 10^{-4}", 3.2e-4),
        (r"$4.20 \times 10^{-2}$", 0.042),
        (r"\sqrt{2}", math.sqrt(2)),
        ("$20.00", 20.0),
        ("+87.8", 87.8),
        (" 9.73", 9.73),
        ("4.722753724416e+16", 4.722753724416e16),
        (r"$1248\pi$", 1248 * math.pi),
        (r" $-1.00 \mu \mathrm{C}$", -1.0),
    ],
)
def test_to_number(answer: str, value: float) -> None:
    assert to_number(answer) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    "answer", ["", "x", "x^2+1", r"\text{A}", "nan", "inf", "1e400", "9" * 500, r"10^{1000}", r"\frac{1}{0}"]
)
def test_to_number_is_none_without_a_finite_value(answer: str) -> None:
    assert to_number(answer) is None


@pytest.mark.parametrize(
    "text",
    ["", "   ", "no number here", r"\boxed{", r"\boxed{}", "#### ", "The answer is unclear.", None, 42],
)
def test_extract_answer_returns_none_without_an_answer(text: object) -> None:
    assert extract_answer(text) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [r"\frac{1}{", r"\boxed{\frac{1}{2}", "}}}{{{", "$$$", r"\sqrt{", "1e400", "(" * 5000, "9" * 20000],
)
def test_malformed_text_never_raises(text: str) -> None:
    extract_answer(text)
    assert check_answer(text, "1") in (True, False)


def test_normalize_is_idempotent() -> None:
    for raw in [
        r"\$1,000.00",
        r"\dfrac{1}{2}",
        r"3.2 \times 10^{-4}",
        "50 percent",
        r"\boxed{18 \text{ eggs}}",
    ]:
        once = normalize_answer(raw)
        assert normalize_answer(once) == once


@pytest.mark.parametrize(
    ("predicted", "reference"),
    [
        (r"\frac{1}{2}", "0.5"),
        ("1/2", r"\frac{1}{2}"),
        ("x^2+2x+1", "(x+1)^2"),
        (r"\{1,2\}", r"\{2,1\}"),
        ("(1,2)", "(1, 2)"),
        ("$20.00", "20"),
        ("50%", "50"),
        ("101", "100"),
        ("0", "0"),
        ("1000", "1,000"),
        (r"2\sqrt{3}", r"\sqrt{12}"),
    ],
)
def test_answers_match(predicted: str, reference: str) -> None:
    assert answers_match(predicted, reference)


@pytest.mark.parametrize(
    ("predicted", "reference"),
    [
        ("102", "100"),
        ("0.001", "0"),
        ("x+1", "x+2"),
        (None, "1"),
        ("", "1"),
        ("nan", "nan"),
        ("1e400", "1e400x"),
        ("A", "B"),
    ],
)
def test_answers_do_not_match(predicted: str | None, reference: str) -> None:
    assert not answers_match(predicted, reference)


def test_relative_tolerance_is_configurable() -> None:
    assert answers_match("0.000101", "0.0001", rel_tol=0.02)
    assert not answers_match("0.000101", "0.0001", rel_tol=0.005)
    assert not answers_match("101", "100", rel_tol=0.0)
    assert answers_match("100", "100", rel_tol=0.0)


def test_check_answer_extracts_then_matches() -> None:
    assert check_answer("She makes 9 * $2 = $18 every day.", "18")
    assert not check_answer("She makes 9 * $2 = $18 every day.", "19")
    assert check_answer(r"Thus the ratio is \boxed{\dfrac{2}{4}}.", r"\frac{1}{2}")


def test_symbolic_checking_works_outside_the_main_thread() -> None:
    results: list[bool] = []
    thread = threading.Thread(target=lambda: results.append(answers_match("(x+1)^2", "x^2+2x+1")))
    thread.start()
    thread.join()
    assert results == [True]


_PIECES = st.sampled_from(
    [
        "0",
        "7",
        "12",
        "99999999999",
        ".",
        ",",
        "-",
        "+",
        "*",
        "/",
        "^",
        "=",
        "%",
        "$",
        " ",
        "\n",
        "(",
        ")",
        "{",
        "}",
        "\\boxed{",
        "\\frac{",
        "\\sqrt{",
        "\\times",
        "10^{",
        "####",
        "The answer is ",
        "Question:",
        "<<",
        ">>",
        "\\text{",
        "nan",
        "inf",
        "e",
        "E",
        "x",
        "\\left(",
        "\\%",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_random_text_never_raises(text: str) -> None:
    answer = extract_answer(text)
    assert answer is None or (isinstance(answer, str) and answer)
    assert check_answer(text, "12") in (True, False)
    value = to_number(text)
    assert value is None or math.isfinite(value)


@pytest.mark.parametrize("answer", [r"110^{9999999999999999999999}", "2E9999999999999999999999", "1000!"])
def test_answers_too_costly_for_sympy_do_not_match(answer: str) -> None:
    assert not answers_match(answer, "12")
    assert to_number(answer) is None
