"""Choosing the constant of a plain question that a composite may replace by a linked constant.

Pool files of the ReSo release mark that constant by hand (`UNK(...)`); a plain file of questions does
not, so one is chosen here, conservatively: a whole integer written as digits that reads as a quantity,
never a number inside LaTeX structure or Asymptote code, a decimal, a thousands group, part of a word, a
range, a year or an index. When no number is safe the question has no constant and can only be a root of
the DAG.

Hand-written rather than parsed with a LaTeX library: the rules are about the characters around a token
(the text must come back exactly when the constant is written back), which no parser preserves.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

MIN_VALUE = 2
# Larger constants are refused: a replay rebuilds the constant as a float sum, exact only well below 2**53.
MAX_VALUE = 10**12
# Any four-digit number in this range may be a year; a year is never a quantity to re-derive.
YEAR_RANGE = range(1000, 2101)
# A number right after one of these words is an index ("term 5", "Part 2", "base 10"), not a quantity.
INDEX_WORDS = frozenset({
    "base", "chapter", "column", "day", "exercise", "figure", "grade", "item", "level", "line", "no", "number",
    "page", "part", "problem", "question", "round", "row", "section", "step", "term", "week", "year",
})
# LaTeX commands a quantity may follow ("3 \cdot 5"); after any other ("\frac 12", "\sqrt 2", "\pmod 6")
# a number is an argument written without braces.
OPERATOR_COMMANDS = frozenset({
    "approx", "cdot", "div", "equiv", "ge", "geq", "gt", "le", "leq", "lt", "ne", "neq", "qquad", "quad", "times",
})

_TOKEN_RE = re.compile(r"[0-9]+")
# Characters that make a number part of something else when they touch it: signs and dashes (ranges),
# decimal points and commas (groups), ratios and times, LaTeX structure, '#' (an index), factorials.
_BEFORE_STOP = frozenset("-+−–—±.,:/^_\\{}#'!")
_AFTER_STOP = frozenset("-−–—:/^_\\{}!'")
# "3.5", "1,000" and LaTeX's "18,\!632", seen from the number on the left.
_GROUP_AFTER_RE = re.compile(r"[.,](?:\\!)?[0-9]")
_ASY_RE = re.compile(r"\[asy\].*?(?:\[/asy\]|$)", re.DOTALL)
_WORD_BEFORE_RE = re.compile(r"([A-Za-z]+)\.?\s+$")
_COMMAND_BEFORE_RE = re.compile(r"\\([A-Za-z]+)\s*$")


@dataclass(frozen=True)
class Constant:
    """A replaceable integer of a question: its value and where its digits stand (`text[start:end]`)."""

    value: int
    start: int
    end: int


def integer_tokens(text: str) -> list[tuple[int, int]]:
    """Every maximal run of ASCII digits as (start, end)."""
    return [match.span() for match in _TOKEN_RE.finditer(text)]


def is_safe(text: str, start: int, end: int) -> bool:
    """Whether the digits `text[start:end]` are a standalone quantity that can be replaced and written back.

    Refused: a leading zero, a value below 2 or above 10**12; a four-digit number that may be a year; a number touching a
    letter or digit, a sign or dash, a decimal point or thousands comma, ':', '/', '#', '!', an apostrophe,
    a brace or a backslash ("5\\%" is kept); a number after '^', '_' or '\\' or before '^' or '_' (spaces
    between do not help); anything inside braces or Asymptote code; a number alone in parentheses or
    brackets ("part (2)", "\\sqrt[3]"); a number after an index word ("term 5") or after a LaTeX command
    other than an operator ("\\frac 12"; "3 \\cdot 5" is fine).
    """
    token = text[start:end]
    value = int(token)
    if token != str(value) or not MIN_VALUE <= value <= MAX_VALUE or (len(token) == 4 and value in YEAR_RANGE):
        return False
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if text.startswith("\\%", end):
        after = "%"
    if before.isalnum() or after.isalnum() or before in _BEFORE_STOP or after in _AFTER_STOP:
        return False
    if _GROUP_AFTER_RE.match(text, end) or (before, after) in (("(", ")"), ("[", "]")):
        return False
    head = text[:start]
    if head.rstrip()[-1:] in ("^", "_", "\\") or text[end:].lstrip()[:1] in ("^", "_"):
        return False
    if _brace_depth(head) > 0 or any(block.start() < start < block.end() for block in _ASY_RE.finditer(text)):
        return False
    command = _COMMAND_BEFORE_RE.search(head)
    if command and command.group(1) not in OPERATOR_COMMANDS:
        return False
    word = _WORD_BEFORE_RE.search(head)
    return not (word and word.group(1).lower() in INDEX_WORDS)


def choose_constant(text: str) -> Constant | None:
    """The constant to link in a question: among the safe integers, the first whose value occurs once
    among all the question's integers, else the first safe one; None when none is safe."""
    tokens = integer_tokens(text)
    counts = Counter(int(text[start:end]) for start, end in tokens)
    safe = [Constant(int(text[start:end]), start, end) for start, end in tokens if is_safe(text, start, end)]
    if not safe:
        return None
    return next((constant for constant in safe if counts[constant.value] == 1), safe[0])


def _brace_depth(head: str) -> int:
    """How many braces are open at the end of `head` (escaped braces `\\{` count too: a set's elements are
    not quantities to re-derive either); never negative, so a stray closing brace cannot unlock the rest."""
    depth = 0
    for char in head:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
    return depth
