"""Features of one candidate answer among its peers, the inputs of the learned small CRM.

Three kinds, all computed from text the system has at scoring time (never from question ids):
the answer's own form (is there a final number, is it marked, is it the result of a computation or just a
number restated from the question, length, a follow-on "Question:"), the step verifier's statistics (how
many written-out arithmetic steps hold), and the collaborative part: how this answer's final number
relates to the other candidates' for the same question (agreement, whether the others' result appears
in this answer's working). Model identity, reputation and a sentence embedding are optional extras.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from reso.reward.answers import cut_follow_on, extract_answer, to_number
from reso.reward.steps import step_stats

_NUMBER = re.compile(r"(?<![\w.])-?\$?\d[\d,]*(?:\.\d+)?")
_EQ_RESULT = re.compile(r"=\s*\$?\s*(-?\d[\d,]*(?:\.\d+)?)")
_MARKED = re.compile(r"####|\\boxed\{|answer is|final answer", re.IGNORECASE)
_REL_TOL = 1e-6


@dataclass(frozen=True, slots=True)
class Candidate:
    """One answer to describe: the question, its text, who wrote it and its group of peers."""

    question: str
    answer: str
    group: str
    model: str | None = None
    reputation: float | None = None


def _to_float(token: str) -> float | None:
    try:
        value = float(token.replace(",", "").replace("$", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def final_number(text: str) -> float | None:
    """The answer's final number as the answer checker reads it (text after a follow-on question dropped)."""
    try:
        extracted = extract_answer(cut_follow_on(text))
        value = to_number(extracted) if extracted is not None else None
    except Exception:  # noqa: BLE001 - the scorer must never raise on a bad answer
        return None
    return value if value is not None and math.isfinite(value) else None


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= _REL_TOL * max(1.0, abs(a), abs(b))


def _numbers(text: str) -> list[float]:
    return [v for v in (_to_float(t) for t in _NUMBER.findall(text)) if v is not None]


def step_statistics(text: str) -> tuple[int, int]:
    """(arithmetic steps written out, steps that hold), from the step verifier."""
    try:
        return step_stats(text)
    except Exception:  # noqa: BLE001 - a verifier failure means no usable steps, not a crash
        return 0, 0


ANSWER_FEATURES = (
    "has_number",
    "marked",
    "final_in_question",
    "final_is_eq_result",
    "final_is_last_eq_result",
    "final_is_integer",
    "ends_with_final",
    "follow_on",
    "log_chars",
    "log_lines",
    "log_numbers",
    "n_eq",
    "steps",
    "steps_correct",
    "steps_wrong",
    "steps_share",
)
GROUP_FEATURES = (
    "n_peers",
    "agree_share",
    "agree_any",
    "peer_final_in_text",
    "final_in_peer_text",
    "peer_has_number",
    "peer_final_in_question",
    "peer_steps_wrong",
)


@dataclass(slots=True)
class _Parsed:
    final: float | None
    body: str
    numbers: list[float]
    features: dict[str, float]


def _parse_answer(question: str, answer: str) -> _Parsed:
    body = cut_follow_on(answer)
    final = final_number(answer)
    numbers = _numbers(body)
    question_numbers = _numbers(question)
    eq_results = [v for v in (_to_float(t) for t in _EQ_RESULT.findall(body)) if v is not None]
    tail_numbers = _numbers(body.rstrip()[-40:])
    steps, steps_ok = step_statistics(body)
    features = {
        "has_number": float(final is not None),
        "marked": float(bool(_MARKED.search(body))),
        "final_in_question": float(any(_close(final, q) for q in question_numbers)),
        "final_is_eq_result": float(any(_close(final, v) for v in eq_results)),
        "final_is_last_eq_result": float(bool(eq_results) and _close(final, eq_results[-1])),
        "final_is_integer": float(final is not None and abs(final - round(final)) < 1e-9),
        "ends_with_final": float(bool(tail_numbers) and _close(final, tail_numbers[-1])),
        "follow_on": float(len(body) < len(answer)),
        "log_chars": math.log1p(len(body)),
        "log_lines": math.log1p(body.count("\n")),
        "log_numbers": math.log1p(len(numbers)),
        "n_eq": float(len(eq_results)),
        "steps": float(steps),
        "steps_correct": float(steps_ok),
        "steps_wrong": float(steps - steps_ok),
        "steps_share": steps_ok / steps if steps else 0.5,
    }
    return _Parsed(final, body, numbers, features)


def candidate_features(candidates: Sequence[Candidate]) -> np.ndarray:
    """The answer and group features of each candidate (rows in the candidates' order).

    Candidates sharing `group` are each other's peers; a candidate alone in its group gets neutral
    group features.

    Returns:
        An array of shape (len(candidates), len(ANSWER_FEATURES) + len(GROUP_FEATURES)).
    """
    parsed = [_parse_answer(c.question, c.answer) for c in candidates]
    groups: dict[str, list[int]] = {}
    for index, candidate in enumerate(candidates):
        groups.setdefault(candidate.group, []).append(index)
    rows = []
    for index, candidate in enumerate(candidates):
        mine = parsed[index]
        peers = [parsed[j] for j in groups[candidate.group] if j != index]
        group = {name: 0.0 for name in GROUP_FEATURES}
        group["n_peers"] = float(len(peers))
        if peers:
            agree = [_close(mine.final, p.final) for p in peers]
            group["agree_share"] = sum(agree) / len(peers)
            group["agree_any"] = float(any(agree))
            group["peer_final_in_text"] = sum(
                any(_close(p.final, v) for v in mine.numbers) for p in peers
            ) / len(peers)
            group["final_in_peer_text"] = sum(
                any(_close(mine.final, v) for v in p.numbers) for p in peers
            ) / len(peers)
            for name, source in (
                ("peer_has_number", "has_number"),
                ("peer_final_in_question", "final_in_question"),
                ("peer_steps_wrong", "steps_wrong"),
            ):
                group[name] = sum(p.features[source] for p in peers) / len(peers)
        else:
            group["agree_share"] = 0.5
        rows.append([mine.features[n] for n in ANSWER_FEATURES] + [group[n] for n in GROUP_FEATURES])
    return np.asarray(rows, dtype=np.float64)


@functools.lru_cache(maxsize=1)
def _embedder() -> Any:
    from reso.agents.embeddings import load_embedder

    return load_embedder("minilm")


def embed_texts(candidates: Sequence[Candidate]) -> np.ndarray:
    """MiniLM sentence embeddings of question + answer, from the bundled offline encoder (loaded once)."""
    texts = [f"{c.question}\n\n{cut_follow_on(c.answer)}" for c in candidates]
    return np.asarray(_embedder().embed(texts), dtype=np.float64)
