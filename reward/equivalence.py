"""Whether a predicted answer equals a reference: relative numeric tolerance, then math-verify.

Numbers compare within a relative tolerance of the reference (1 % by default, as the benchmarks use;
an exact match is needed when the reference is 0). Answers without a numeric value (expressions,
intervals, sets) go to math-verify's `parse`/`verify`, which does the symbolic work through sympy.
Nothing here raises on bad input: malformed answers simply do not match.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from functools import lru_cache
from typing import Any

from reso.reward.extract import extract_answer, looks_like_plain_number, normalize_answer, plain_number

_ZERO_ABS_TOL = 1e-12
# Longer "answers" are prose or runaway output; sympy on them is slow and never meaningful.
_MAX_SYMBOLIC_CHARS = 1000
# Inputs sympy would spend seconds (or, outside the main thread where math-verify has no timeout,
# forever) on: huge powers and exponents, factorials of large numbers, very long digit runs.
_COSTLY = re.compile(r"\^\s*[{(]?\s*[-+]?\s*\d{4,}|[eE][-+]?\d{4,}|\d{3,}\s*!|\d{101,}")
# math-verify guards its sympy work with SIGALRM, which only the main thread may set.
_PARSE_TIMEOUT_S = 5


def to_number(answer: str) -> float | None:
    """The numeric value of an answer string, or None when it has none.

    Plain numbers are read directly ("1,000" → 1000, "$20.00" → 20, "3.2e-4", "3.2 \\times 10^{-4}");
    percentages keep the number written ("50%" → 50); LaTeX ("\\frac{1}{2}", "\\sqrt{2}", "2\\pi") is
    parsed by math-verify and evaluated. Non-finite, complex or symbolic values give None.

    Args:
        answer: An answer string, raw or normalised.

    Returns:
        The value as a float, or None.
    """
    try:
        value = plain_number(answer)
        if value is not None:
            return value
        normalised = normalize_answer(answer)
        if normalised is None:
            return None
        body = normalised.removesuffix("%").strip()
        if not body or looks_like_plain_number(body):
            return None  # a plain number that plain_number rejected is non-finite ("1e400")
        return _sympy_number(body)
    except Exception:  # noqa: BLE001 - any failure of the LaTeX stack means "no number"
        return None


def answers_match(predicted: str | None, reference: str, *, rel_tol: float = 0.01) -> bool:
    """Whether a predicted answer equals the reference.

    Args:
        predicted: The extracted (or raw) predicted answer; None never matches.
        reference: The ground-truth answer.
        rel_tol: Relative tolerance for numeric answers, measured against the reference.

    Returns:
        True when both have values within `rel_tol` of each other, or math-verify finds them equal.
    """
    try:
        pred = normalize_answer(predicted) if isinstance(predicted, str) else None
        ref = normalize_answer(reference) if isinstance(reference, str) else None
        if not pred or not ref or "nan" in (pred.lower(), ref.lower()):
            return False
        if pred == ref:
            return True
        pred_value, ref_value = to_number(pred), to_number(ref)
        if pred_value is not None and ref_value is not None:
            return numbers_close(pred_value, ref_value, rel_tol=rel_tol)
        if looks_like_plain_number(pred.removesuffix("%")) or looks_like_plain_number(ref.removesuffix("%")):
            return False  # a plain number without a finite value ("1e400") equals nothing
        return _verify(ref, pred)
    except Exception:  # noqa: BLE001 - a comparison that cannot be made is a mismatch
        return False


def check_answer(text: str, reference: str, *, rel_tol: float = 0.01) -> bool:
    """Extract the final answer from `text` and compare it with `reference` (see `answers_match`)."""
    return answers_match(extract_answer(text), reference, rel_tol=rel_tol)


def numbers_close(value: float, reference: float, *, rel_tol: float = 0.01) -> bool:
    """`value` within `rel_tol` of `reference`, relative to the reference (exact-ish when it is 0)."""
    if not (math.isfinite(value) and math.isfinite(reference)):
        return False
    return abs(value - reference) <= max(rel_tol * abs(reference), _ZERO_ABS_TOL)


def _timeout() -> int | None:
    if threading.current_thread() is threading.main_thread():
        return _PARSE_TIMEOUT_S
    # Off the main thread math-verify cannot time out (it uses signal.alarm) and says so once on stderr;
    # the guards above keep costly inputs away from sympy, so that warning would only be noise in the CLI.
    logging.getLogger("math_verify.grader").setLevel(logging.ERROR)
    logging.getLogger("math_verify.parser").setLevel(logging.ERROR)
    return None


@lru_cache(maxsize=4096)
def _parsed(answer: str) -> tuple[Any, ...]:
    from math_verify import parse

    if len(answer) > _MAX_SYMBOLIC_CHARS or _COSTLY.search(answer):
        return ()
    return tuple(parse(f"${answer}$", parsing_timeout=_timeout()))


def _sympy_number(latex: str) -> float | None:
    import sympy

    for candidate in _parsed(latex):
        if isinstance(candidate, sympy.Basic) and candidate.is_number:
            value = complex(candidate.evalf())
            if value.imag == 0 and math.isfinite(value.real):
                return value.real
            return None
    return None


def _verify(reference: str, predicted: str) -> bool:
    from math_verify import verify

    gold, target = _parsed(reference), _parsed(predicted)
    if not gold or not target:
        return False
    return bool(verify(list(gold), list(target), timeout_seconds=_timeout()))
