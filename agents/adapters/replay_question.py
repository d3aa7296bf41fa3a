"""Which recorded question a subtask prompt asks: what a replay agent looks up in its recordings.

The prompt's current subtask (`reso.agents.adapters.prompting.current_subtask`) is cut of the release's suffix
"The answer is recorded as Answer[i]". A linked sub-question names one of its constants through earlier
answers, `UNK_<i>(a constant calculated by adding the sum of Answer[<p1>, <p2>] to the number (<adj>). )`;
the constant is computed exactly from the prompt's `Answer[<id>] = <value>` lines and written back in
place of the phrase. So right parent answers give back the original question (and its recording); a wrong
one gives a question nobody recorded, and the agent has no recording rather than another question's answer.
`original_pattern` finds the original all the same (each linked phrase standing for any number), so that
such a call can be charged as the recorded call to it.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext
from fractions import Fraction

from reso.agents.adapters.prompting import answer_bindings, current_subtask
from reso.agents.adapters.release_text import LINKED_CONSTANT_RE, split_recorded
from reso.agents.adapters.replay_table import normalise_question

# How close a computed constant must be to an integer to be written as one (relative, floor 1).
INTEGER_TOLERANCE = 1e-6
# What a linked constant stood for in the original question: a number as questions write one ("40",
# "-3", "2.5", "1,000", "3e5").
ORIGINAL_NUMBER = r"[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
# Holds each linked phrase's place through `normalise_question`: no question contains it, and NFKC,
# lower-casing and whitespace folding leave it as it is.
_SLOT = "\x00"


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


def subtask_text(prompt: str) -> str:
    """The current subtask of a prompt without the release's "The answer is recorded as" suffix; linked
    constants are left as written."""
    return split_recorded(current_subtask(prompt))[0]


def asked_question(prompt: str) -> str | None:
    """The recorded question a subtask prompt asks, or None when a linked constant cannot be computed."""
    text = subtask_text(prompt)
    if LINKED_CONSTANT_RE.search(text) is None:
        return text
    try:
        return resolve_linked(text, answer_bindings(prompt))
    except Unresolvable:
        return None


def original_pattern(text: str) -> re.Pattern[str] | None:
    """What the normalised original of a linked sub-question looks like: `text` (a `subtask_text`) with each
    linked phrase standing for any number, to be matched in full; None when `text` links no constant."""
    if LINKED_CONSTANT_RE.search(text) is None:
        return None
    slotted = normalise_question(LINKED_CONSTANT_RE.sub(_SLOT, text))
    return re.compile(ORIGINAL_NUMBER.join(re.escape(part) for part in slotted.split(_SLOT)))
