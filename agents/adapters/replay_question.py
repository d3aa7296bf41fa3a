"""Which recorded question a subtask prompt asks: what a replay agent looks up in its recordings.

The prompt's current subtask (`reso.agents.adapters.prompting.current_subtask`) is cut of the release's suffix
"The answer is recorded as Answer[i]". A linked sub-question names one of its constants through earlier
answers, `UNK_<i>(a constant calculated by adding the sum of Answer[<p1>, <p2>] to the number (<adj>). )`;
the constant is computed exactly from the prompt's `Answer[<id>] = <value>` lines and written back in
place of the phrase. So right parent answers give back the original question (and its recording); a wrong
one gives a question nobody recorded, and the agent has no recording rather than another question's answer.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction

from reso.agents.adapters.prompting import answer_bindings, current_subtask
from reso.agents.adapters.release_text import LINKED_CONSTANT_RE, split_recorded

# How close a computed constant must be to an integer to be written as one (relative, floor 1).
INTEGER_TOLERANCE = 1e-6


class Unresolvable(LookupError):
    """A linked constant cannot be computed: a parent answer is missing or not a number."""


def _exact(text: str) -> Fraction:
    """A parent's answer as an exact fraction, read by the calculator tool's parser (plain numbers,
    "1/2", "\\frac{1}{2}", "1e-05", "$18", "50%")."""
    from reso.agents.adapters.tools import parse_value  # SymPy: imported only when a linked constant is met

    try:
        value = parse_value(text)
    except (ValueError, TypeError, ArithmeticError):
        raise Unresolvable(f"not a number: {text!r}") from None
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    if value.is_real and value.is_finite:  # e.g. sqrt(2): exact to 30 digits is exact enough to miss
        return Fraction(Decimal(str(value.evalf(30))))
    raise Unresolvable(f"not a real number: {text!r}")


def constant_text(value: Fraction) -> str:
    """How a computed constant is written into the question: an integer when within
    `INTEGER_TOLERANCE` of one, else its plain decimal text (exact when the decimal terminates)."""
    nearest = round(value)
    if abs(value - nearest) <= INTEGER_TOLERANCE * max(Fraction(1), abs(value)):
        return str(nearest)
    with localcontext() as context:
        context.prec = 40
        decimal = Decimal(value.numerator) / Decimal(value.denominator)
    return format(decimal.normalize(), "f")


def linked_value(parents: str, adj: str, bindings: dict[str, str]) -> Fraction:
    """The sum of the parents' bound answers plus `adj`, exactly.

    Raises:
        Unresolvable: A parent has no binding or a non-numeric one, or `adj` is not a number.
    """
    total = Fraction(0)
    for parent in (part.strip() for part in parents.split(",")):
        if parent not in bindings:
            raise Unresolvable(f"Answer[{parent}] has no value in the prompt")
        total += _exact(bindings[parent])
    try:
        return total + Fraction(Decimal(adj))
    except InvalidOperation:
        raise Unresolvable(f"not a number: {adj!r}") from None


def resolve_linked(text: str, bindings: dict[str, str]) -> str:
    """`text` with every linked constant replaced by its computed value.

    Raises:
        Unresolvable: A constant cannot be computed from `bindings`.
    """
    def substitute(match: re.Match[str]) -> str:
        return constant_text(linked_value(match.group("parents"), match.group("adj"), bindings))

    return LINKED_CONSTANT_RE.sub(substitute, text)


def asked_question(prompt: str) -> str | None:
    """The recorded question a subtask prompt asks, or None when a linked constant cannot be computed."""
    text, _ = split_recorded(current_subtask(prompt))
    if LINKED_CONSTANT_RE.search(text) is None:
        return text
    try:
        return resolve_linked(text, answer_bindings(prompt))
    except Unresolvable:
        return None
