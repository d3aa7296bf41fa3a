"""Reading and writing the numbers found in benchmark files ("942.0", "+7.3", "89,034.79", one-element
lists, LaTeX fractions as answers), exactly where exactness matters."""

from __future__ import annotations

import math
import re
import threading
from decimal import Decimal, InvalidOperation
from fractions import Fraction

# LaTeX rationals as MATH writes its answers ("\frac{3}{4}", "-\dfrac{7}{2}"); a short answer only.
_LATEX_FRACTION_RE = re.compile(r"\\[dt]?frac|/")
_MAX_LATEX_ANSWER_CHARS = 100


def parse_number(value: object) -> float:
    """A benchmark number as a float.

    Args:
        value: An int, a float, a numeric string (commas as thousands separators and a leading "+" are
            allowed) or a one-element list holding one of these (the release's `question_vals` quirk).

    Raises:
        ValueError: When the value is not a finite number.
    """
    return float(parse_exact(value))


def parse_exact(value: object) -> Fraction:
    """A benchmark number as an exact fraction (floats are read through their shortest decimal form,
    so 0.1 is 1/10; a Fraction is returned as is)."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        # A ValueError like every other unreadable number: callers report bad data, not a programming error.
        raise ValueError(f"expected a number, got {type(value).__name__}")  # noqa: TRY004
    text = repr(value) if isinstance(value, float) else str(value)
    text = text.strip().replace(",", "")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a number: {value!r}") from None
    if not number.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return Fraction(number)


def parse_exact_answer(value: object) -> Fraction:
    """An answer as an exact fraction: what `parse_exact` reads, and also a LaTeX fraction
    ("\\frac{3}{4}", "-\\dfrac{7}{2}", "1/3").

    math-verify reads the LaTeX (sympy does the arithmetic); only a result that is a rational number as
    parsed counts, so irrational or symbolic answers ("5\\sqrt{2}", "\\frac{\\pi}{2}"), percentages and
    anything without a fraction are refused rather than approximated.

    Raises:
        ValueError: When the answer is not an exact finite number.
    """
    try:
        return parse_exact(value)
    except ValueError:
        if (not isinstance(value, str) or len(value) > _MAX_LATEX_ANSWER_CHARS or "%" in value
                or not _LATEX_FRACTION_RE.search(value)):
            raise
    import sympy
    from math_verify import parse

    # math-verify guards sympy with SIGALRM, which only the main thread may set.
    timeout = 5 if threading.current_thread() is threading.main_thread() else None
    parsed = parse(f"${value.strip().strip('$')}$", parsing_timeout=timeout)
    if parsed and isinstance(parsed[0], sympy.Rational):
        return Fraction(int(parsed[0].p), int(parsed[0].q))
    raise ValueError(f"not an exact number: {value!r}")


def format_number(value: float | Fraction) -> str:
    """Shortest faithful text for a number: integers without ".0", exact decimals when the value has a
    terminating decimal expansion, otherwise the float's shortest repr."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value!r}")
        value = Fraction(Decimal(repr(value)))
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    twos = fives = 0
    rest = value.denominator
    while rest % 2 == 0:
        rest, twos = rest // 2, twos + 1
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    if rest == 1:
        places = max(twos, fives)
        scaled = abs(value) * 10**places  # an integer: the denominator divides 10**places
        digits = str(scaled.numerator).rjust(places + 1, "0")
        text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
        return f"-{text}" if value < 0 else text
    return repr(float(value))


def json_number(value: Fraction) -> int | float:
    """An exact number as JSON writes it: an int when whole, else the nearest float."""
    return value.numerator if value.denominator == 1 else float(value)


def close(a: float, b: float, rel: float, abs_tol: float = 1e-12) -> bool:
    """Whether two numbers agree within a relative tolerance (with a tiny absolute floor for zero)."""
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
