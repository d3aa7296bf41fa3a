"""Features of one answer on its own that carry across models and problem sets.

The small CRM must judge answers of models it has never seen, on problems unlike its training ones, so
these look at what any worked solution shows rather than at one model's habits: the form of the final
answer, signs of truncation or of a generation that loops, hedging and self-correction, whether the final
answer is what the working derives (the last computed result, repeated in the text, one answer stated
rather than several), the step verifier's re-checked arithmetic, and the question's own length and
notation (a difficulty prior that holds from GSM8K to olympiad problems). Answers that wrap their working
in a JSON object `{"reasoning": …, "answer": …}` (the ZeroEval recordings) are unwrapped first, so the
wrapper is never a feature.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass

import numpy as np

from reso.reward.answers import cut_follow_on, extract_answer, normalize_answer, to_number
from reso.reward.steps import step_stats

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_EQ_RESULT = re.compile(r"=\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)")
_EQ_RHS = re.compile(r"=\s*([^=\n,;]{1,60})")
_BOXED = re.compile(r"\\boxed\s*\{")
_MARKED_PHRASE = re.compile(r"(?:final answer|the answer is|answer\s*:)\s*(?:is\s*)?:?\s*([^\n]{1,60})", re.IGNORECASE)
_MARKED = re.compile(r"####|\\boxed\{|answer is|final answer|answer\s*:", re.IGNORECASE)
_HEDGES = re.compile(
    r"\b(?:i think|maybe|perhaps|might be|not sure|unsure|i guess|seems? (?:to be|like)|possibly|probably|"
    r"likely|assum(?:e|ing)|unclear)\b",
    re.IGNORECASE,
)
_REVISIONS = re.compile(
    r"\b(?:wait|actually|oops|mistake|my error|incorrect|re-?evaluat\w*|re-?check\w*|re-?examin\w*|"
    r"reconsider\w*|correction|let me (?:try|redo|start) again|that'?s not right|doesn'?t (?:work|match))\b",
    re.IGNORECASE,
)
_GIVES_UP = re.compile(
    r"cannot be determined|can ?not determine|not enough information|insufficient information|no solution|"
    r"does not exist|is impossible|not possible to",
    re.IGNORECASE,
)
_APPROX = re.compile(r"≈|\\approx|approximately|roughly|about \d", re.IGNORECASE)
_JSON_REASONING = re.compile(r"[\"']reasoning[\"']\s*:\s*[\"`]?", re.IGNORECASE)
_JSON_ANSWER = re.compile(r"[\"']answer[\"']\s*:\s*\"((?:[^\"\\]|\\.)*)\"", re.IGNORECASE)
_REL_TOL = 1e-6

SOLUTION_FEATURES = (
    # the final answer's form
    "has_final",
    "final_marked",
    "final_numeric",
    "final_integer",
    "final_symbolic",
    "final_log_len",
    "final_in_question",
    "final_is_eq_result",
    "final_is_last_eq_result",
    "final_log_mentions",
    "distinct_marked",
    # truncation and loops
    "truncated",
    "unbalanced",
    "ends_with_final",
    "repeated_lines",
    # hedging, self-correction, giving up
    "hedges",
    "revisions",
    "gives_up",
    "approximate",
    # size and notation
    "log_chars",
    "log_lines",
    "log_numbers",
    "log_eq",
    "latex_density",
    # the step verifier
    "steps",
    "steps_wrong",
    "steps_share",
    # the question
    "q_log_chars",
    "q_latex_density",
    "q_log_numbers",
    "answer_question_ratio",
)


@dataclass(frozen=True, slots=True)
class Solution:
    """One answer read once: its working, its final answer (and that answer's key), its numbers."""

    body: str
    final: str | None
    key: str | None
    numbers: frozenset[float]
    features: tuple[float, ...]


def unwrap(answer: str) -> tuple[str, str | None, bool]:
    """(working, stated final answer or None, whether a JSON wrapper was left unclosed) of an answer.

    A JSON object with "reasoning" and "answer" (often not valid JSON: LaTeX backslashes) gives its
    reasoning as the working and its answer as the stated final answer; any other text is its own working.
    """
    match = _JSON_REASONING.search(answer)
    if match is None:
        return answer, None, False
    start, end = answer.find("{"), answer.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(answer[start : end + 1])
        except (json.JSONDecodeError, RecursionError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("reasoning"), str):
            final = data.get("answer")
            return data["reasoning"], None if final is None else str(final), False
    stated = _JSON_ANSWER.findall(answer)
    body = answer[match.end() :]
    cut = re.search(r"[\"`]?\s*,\s*[\"']answer[\"']\s*:", body)
    if cut is not None:
        body = body[: cut.start()]
    final = stated[-1].replace("\\\\", "\\") if stated else None
    return body, final, end < match.end()


def answer_key(final: str | None) -> str | None:
    """A key under which equivalent final answers coincide: the value to six significant digits when the
    answer is a number, else its normalised text without spaces."""
    if final is None:
        return None
    value = to_number(final)
    if value is not None and math.isfinite(value):
        return f"{value:.6g}"
    normal = normalize_answer(final)
    return "".join(normal.split()) if normal else None


def _to_float(token: str) -> float | None:
    try:
        value = float(token.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _numbers(text: str) -> list[float]:
    return [v for v in (_to_float(t) for t in _NUMBER.findall(text)) if v is not None]


def _close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= _REL_TOL * max(1.0, abs(a), abs(b))


def _per_kword(count: int, words: int) -> float:
    return math.log1p(1000.0 * count / max(words, 50))


def _repeated_lines(body: str) -> float:
    lines = [line.strip() for line in body.splitlines() if len(line.strip()) > 8]
    return 1.0 - len(set(lines)) / len(lines) if lines else 0.0


def _unbalanced(body: str) -> bool:
    return body.count("{") != body.count("}") or body.count("$") % 2 == 1 or body.count("(") < body.count(")")


def _marked_values(body: str) -> set[str]:
    values = set()
    for match in _BOXED.finditer(body):
        depth, i = 1, match.end()
        while i < len(body) and depth:
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
        values.add("".join(body[match.end() : i - 1].split()))
    values.update("".join(m.group(1).strip().rstrip(".").split()) for m in _MARKED_PHRASE.finditer(body))
    return {v for v in values if v}


@functools.lru_cache(maxsize=200_000)
def read_solution(question: str, answer: str) -> Solution:
    """Read one answer to `question`: its working, final answer and features (cached per text pair)."""
    body, stated, open_json = unwrap(cut_follow_on(answer))
    try:
        final = normalize_answer(stated) if stated is not None else extract_answer(body)
    except Exception:  # noqa: BLE001 - a reader failure means no final answer, never a crash
        final = None
    value = to_number(final) if final is not None else None
    numbers = _numbers(body)
    eq_results = [v for v in (_to_float(t) for t in _EQ_RESULT.findall(body)) if v is not None]
    eq_text = ["".join(m.split()).rstrip(".$") for m in _EQ_RHS.findall(body)]
    compact = "".join(final.split()) if final else ""
    words = len(body.split())
    try:
        steps, steps_ok = step_stats(body)
    except Exception:  # noqa: BLE001 - a verifier failure means no usable steps
        steps, steps_ok = 0, 0
    tail = body.rstrip()[-max(40, len(body) // 8) :]
    marked = _marked_values(body) | ({"".join(stated.split())} if stated else set())
    stripped = body.rstrip()
    q_numbers = _numbers(question)
    features = {
        "has_final": float(final is not None),
        "final_marked": float(stated is not None or bool(_MARKED.search(body))),
        "final_numeric": float(value is not None),
        "final_integer": float(value is not None and abs(value - round(value)) < 1e-9),
        "final_symbolic": float(final is not None and value is None),
        "final_log_len": math.log1p(len(final)) if final else 0.0,
        "final_in_question": float(any(_close(value, q) for q in q_numbers)),
        "final_is_eq_result": float(
            any(_close(value, v) for v in eq_results) or (bool(compact) and compact in eq_text)
        ),
        "final_is_last_eq_result": float(
            (bool(eq_results) and _close(value, eq_results[-1])) or (bool(eq_text) and compact == eq_text[-1])
        ),
        "final_log_mentions": math.log1p(body.count(final)) if final else 0.0,
        "distinct_marked": float(min(len(marked), 5)),
        "truncated": float(open_json or (final is None and bool(stripped) and stripped[-1].isalnum())),
        "unbalanced": float(_unbalanced(body)),
        "ends_with_final": float(
            bool(final and (final in tail or any(_close(value, v) for v in _numbers(tail))))
        ),
        "repeated_lines": _repeated_lines(body),
        "hedges": _per_kword(len(_HEDGES.findall(body)), words),
        "revisions": _per_kword(len(_REVISIONS.findall(body)), words),
        "gives_up": float(bool(_GIVES_UP.search(body))),
        "approximate": float(bool(_APPROX.search(body))),
        "log_chars": math.log1p(len(body)),
        "log_lines": math.log1p(body.count("\n")),
        "log_numbers": math.log1p(len(numbers)),
        "log_eq": math.log1p(len(eq_results) + len(eq_text)),
        "latex_density": 100.0 * body.count("\\") / max(len(body), 1),
        "steps": math.log1p(steps),
        "steps_wrong": float(steps - steps_ok),
        "steps_share": steps_ok / steps if steps else 0.5,
        "q_log_chars": math.log1p(len(question)),
        "q_latex_density": 100.0 * (question.count("\\") + question.count("$")) / max(len(question), 1),
        "q_log_numbers": math.log1p(len(q_numbers)),
        "answer_question_ratio": math.log1p(len(body)) - math.log1p(len(question)),
    }
    return Solution(
        body=body,
        final=final,
        key=answer_key(final),
        numbers=frozenset(numbers),
        features=tuple(features[name] for name in SOLUTION_FEATURES),
    )


def solution_features(questions: list[str], answers: list[str]) -> np.ndarray:
    """The SOLUTION_FEATURES of each (question, answer) pair, one row each."""
    rows = [read_solution(q, a).features for q, a in zip(questions, answers, strict=True)]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(SOLUTION_FEATURES))
