"""Step verifier: re-check the arithmetic a solution writes out and score the share that holds.

A step is an equation whose left side computes something: "16 - 3 = 13", "9 * $2 = $18",
"<<9*2=18>>", "$4 \\times 5 = 20$", "12/60 = 0.2"; chains ("2 + 3 = 5 * 2 = 10") give one step per link.
Each side is evaluated exactly with `fractions.Fraction` by a small parser over Python's `ast` that only
admits numbers, + - * / ** and parentheses: nothing is ever passed to `eval`, so an answer cannot run code.
(sympy's `parse_expr` calls `eval` internally, which is why this is hand-written.)

A stated value that is rounded still holds when the exact value rounds to it at the precision written
("10/3 = 3.33"), or is within `rel_tol` of it.

Scores: the share of steps that hold, pulled toward 0.5 by `prior_weight` pseudo-steps (so one checked
step counts for less than ten); with `prior_weight=0` it is the plain share. An answer with no checkable
step gets the neutral 0.5 with a reason; an empty answer, or one without any number, gets 0. Given a
solution's steps (`score_steps`), each step scores 0 when one of its equations fails, 1 when all hold, and
the neutral 0.5 when it has none, so the first failing equation marks the first wrong step.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from reso.reward.base import Score, ScoreItem, Scorer, StepScoring

NEUTRAL = 0.5
_MAX_LITERAL_DIGITS = 40
_MAX_EXPONENT = 64
_MAX_DECIMAL_EXPONENT = 400
_MAX_TEXT = 100_000
_MAX_LINE = 2_000  # bounds the regex's backtracking on pathological lines

_CALCULATOR = re.compile(r"<<([^<>=]+)=([^<>]+)>>")
_CALCULATOR_ANY = re.compile(r"<<[^<>]*>>|<<[^<>]*$")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+|step\s*\d+\s*[:.]\s*)", re.IGNORECASE | re.MULTILINE)
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_OPS = (
    (re.compile(r"\\times|\\cdot|×|·|\\ast"), "*"),
    (re.compile(r"\\div|÷"), "/"),
    (re.compile(r"−|–"), "-"),
    (re.compile(r"\\\*"), "*"),
    (re.compile(r"\\left|\\right|\\[,;:! ]|\\\$|\$|€|£"), " "),
    (re.compile(r"\\text\s*\{[^{}]*\}|\\mathrm\s*\{[^{}]*\}"), " "),
    (re.compile(r"(?<=[\d)])\s*[xX]\s*(?=[\d(])"), "*"),
    (re.compile(r"(?<=\d),(?=\d{3}(?!\d))"), ""),
    (re.compile(r"\{"), "("),
    (re.compile(r"\}"), ")"),
    (re.compile(r"\^"), "**"),
)
# A run of arithmetic: numbers, operators, parentheses, percent signs and at least one "=".
_RUN = re.compile(r"[\d.()+\-*/%\s]*[\d)%]\s*=\s*[-+(\d.][\d.()+\-*/%=\s]*")
_TIMES_100 = re.compile(r"\*\s*100(?![\d.])|(?<![\d.])100\s*\*")
_FRAGMENT = re.compile(r"\s*(?:[+*/]|-\s)")
_OPERATOR = re.compile(r"(?<=[\d)%])\s*[-+*/]|\*\*")


@dataclass(frozen=True, slots=True)
class Step:
    """One checked equation: the computed side, the stated side, and whether they agree."""

    left: str
    right: str
    holds: bool


def find_steps(text: str, *, rel_tol: float = 1e-4) -> list[Step]:
    """Every checkable arithmetic step in `text`, duplicates (a step and its calculator note) once.

    Args:
        text: A written solution.
        rel_tol: Relative tolerance on top of rounding at the written precision.

    Returns:
        The steps in the order they appear.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    text = text[:_MAX_TEXT]
    steps: list[Step] = []
    seen: set[tuple[Fraction, Fraction]] = set()
    # (computed side, stated side, whether the chain goes on after the stated side)
    links: list[tuple[str, str, bool]] = [(m.group(1), m.group(2), False) for m in _CALCULATOR.finditer(text)]
    prose = _LIST_MARKER.sub(" ", _CALCULATOR_ANY.sub(" ", text))
    for line in prose.splitlines():
        for run in _RUN.finditer(_to_arithmetic(line[:_MAX_LINE])):
            parts = [part.strip() for part in run.group(0).split("=")]
            links.extend((a, b, i + 2 < len(parts)) for i, (a, b) in enumerate(itertools.pairwise(parts)))
    for left, right, chained in links:
        left, right = _to_arithmetic(left).strip(), _to_arithmetic(right).strip()
        # Only "computation = value" links count. A computed side that opens with an operator, or a bare
        # number before a computation ("99% of $5 = 0.99 * $5"), is the tail of a phrase, not a step.
        if not left or not right or not _OPERATOR.search(left) or _FRAGMENT.match(left):
            continue
        left_value, right_value = evaluate(left), evaluate(right)
        if left_value is None or right_value is None or (left_value, right_value) in seen:
            continue
        seen.add((left_value, right_value))
        holds = _agrees(left_value, right, rel_tol, times_100=_TIMES_100.search(left) is not None)
        if not holds and chained and _OPERATOR.search(right):
            # A running chain "2 + 3 = 5 * 2 = 10" carries the result on as the next first operand.
            holds = _agrees(left_value, _leading_number(right), rel_tol, times_100=False)
        steps.append(Step(left=left, right=right, holds=holds))
    return steps


def step_stats(text: str) -> tuple[int, int]:
    """(number of checkable steps, number that hold) — features for learned reward models."""
    steps = find_steps(text)
    return len(steps), sum(step.holds for step in steps)


def evaluate(expression: str) -> Fraction | None:
    """The exact value of a plain arithmetic expression, or None when it is not one (or too large).

    Args:
        expression: Numbers, + - * / ** %, parentheses ("20% * 40" reads as 20/100 * 40).
    """
    source = re.sub(r"(\d+(?:\.\d+)?)\s*%", r"(\1/100)", expression.strip())
    if not source or len(source) > 500:
        return None
    try:
        tree = ast.parse(source, mode="eval")
        return _value(tree.body, source)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError, TypeError):
        return None


class StepVerifierScorer(Scorer, StepScoring):
    """Scores each answer by the share of its written arithmetic steps that hold (no model)."""

    name = "steps"

    def __init__(self, *, prior_weight: float = 1.0, rel_tol: float = 1e-4) -> None:
        """Configure the verifier.

        Args:
            prior_weight: Pseudo-steps at the neutral 0.5 mixed into the share (0 gives the plain share).
            rel_tol: Relative tolerance for stated values, on top of rounding at the written precision.
        """
        if prior_weight < 0:
            raise ValueError(f"prior_weight must be >= 0, got {prior_weight}")
        if rel_tol < 0:
            raise ValueError(f"rel_tol must be >= 0, got {rel_tol}")
        self.prior_weight = prior_weight
        self.rel_tol = rel_tol

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [self._score_one(item.answer) for item in items]

    def score_steps(self, items: Sequence[ScoreItem], steps: Sequence[Sequence[str]]) -> list[list[float]]:
        return [[self._step_value(text) for text in solution] for solution in steps]

    def _step_value(self, text: str) -> float:
        checked = find_steps(text, rel_tol=self.rel_tol)
        if not checked:
            return NEUTRAL
        return 1.0 if all(step.holds for step in checked) else 0.0

    def _score_one(self, answer: object) -> Score:
        if not isinstance(answer, str) or not answer.strip():
            return Score(0.0, "empty answer")
        if not re.search(r"\d", answer):
            return Score(0.0, "no number in the answer")
        steps = find_steps(answer, rel_tol=self.rel_tol)
        if not steps:
            return Score(NEUTRAL, "no checkable arithmetic step")
        correct = sum(step.holds for step in steps)
        value = (correct + NEUTRAL * self.prior_weight) / (len(steps) + self.prior_weight)
        wrong = [f"{step.left} = {step.right}" for step in steps if not step.holds]
        reason = f"{len(wrong)} of {len(steps)} steps wrong: {'; '.join(wrong[:3])}" if wrong else None
        return Score(value, reason)


def _to_arithmetic(text: str) -> str:
    text = _LATEX_FRAC.sub(r"((\1)/(\2))", text)
    for pattern, replacement in _LATEX_OPS:
        text = pattern.sub(replacement, text)
    return text


def _leading_number(expression: str) -> str:
    match = re.match(r"\s*\(*\s*(-?[\d.]+%?)", expression)
    return match.group(1) if match else ""


def _agrees(computed: Fraction, stated_text: str, rel_tol: float, *, times_100: bool) -> bool:
    """Whether the computed value is what `stated_text` says, allowing for rounding and for percent.

    "(4 / 20) * 100 = 20%" is how people write percentages: when the computed side multiplies by 100,
    a stated "20%" also accepts 20.
    """
    stated = evaluate(stated_text)
    if stated is None:
        return False
    percent = stated_text.rstrip(" )").endswith("%")
    decimals = re.search(r"\.(\d+)\s*%?\s*\)?\s*$", stated_text)
    half_unit = Fraction(0)
    if decimals and not _OPERATOR.search(stated_text):
        half_unit = Fraction(1, 2 * 10 ** len(decimals.group(1)))
    candidates = [(stated, half_unit / 100 if percent else half_unit)]
    if percent and times_100:
        candidates.append((stated * 100, half_unit))
    for value, rounding in candidates:
        difference = abs(computed - value)
        if difference <= rounding or difference <= Fraction(rel_tol) * abs(computed):
            return True
    return False


def _value(node: ast.AST, source: str) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        literal = ast.get_source_segment(source, node) or ""
        mantissa, _, exponent = literal.lower().partition("e")
        if len(mantissa) > _MAX_LITERAL_DIGITS or (exponent and abs(int(exponent)) > _MAX_DECIMAL_EXPONENT):
            raise ValueError("number too large to check")
        return Fraction(literal)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _value(node.operand, source)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, source), _value(node.right, source)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
        if isinstance(node.op, ast.Pow):
            if right.denominator != 1 or abs(right) > _MAX_EXPONENT:
                raise ValueError("only small whole exponents are checked")
            return left ** int(right)
    raise ValueError(f"not plain arithmetic: {type(node).__name__}")
