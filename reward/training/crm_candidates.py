"""Choosing among K recorded answers to one question: the CRM's pick against the vote, a fixed model, the oracle.

This is the decision the CRM makes in the graph (keep one of a subtask's k candidates), replayed on
recorded answers: for every question with at least K answers, `draws` random slates of K of them (seeded).
On each slate the CRM keeps its highest-scored answer (scored with the slate as its peers); majority vote
keeps an answer of the largest cluster of equal final answers (ties and answerless slates broken at
random); the best fixed model keeps the answer of the slate's model with the best record on training
questions; the oracle is right when any answer is. Shares are means over questions of each question's
share of right picks, with percentile intervals from resampling questions.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from reso.reward.answer_features import read_solution
from reso.reward.labelled_records import LabelledRecord, question_key

METHODS = ("crm", "vote", "best_fixed", "oracle")


def draw_slates(records: Sequence[LabelledRecord], k: int, draws: int, seed: int = 0) -> list[list[int]]:
    """`draws` random slates of `k` answers per question (questions with fewer answers are left out)."""
    if k < 1 or draws < 1:
        raise ValueError(f"k and draws must be at least 1, got k={k}, draws={draws}")
    rng = random.Random(seed)
    by_question: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        by_question.setdefault(question_key(record), []).append(index)
    return [rng.sample(members, k) for members in by_question.values() if len(members) >= k for _ in range(draws)]


def _vote(records: Sequence[LabelledRecord], slate: Sequence[int], rng: random.Random) -> int:
    keys = {i: read_solution(records[i].instruction, records[i].answer).key for i in slate}
    counts = Counter(key for key in keys.values() if key is not None)
    if not counts:
        return rng.choice(list(slate))
    top = max(counts.values())
    return rng.choice([i for i in slate if (key := keys[i]) is not None and counts[key] == top])


def _fixed(records: Sequence[LabelledRecord], slate: Sequence[int], record_of: Mapping[str, float],
           rng: random.Random) -> int:
    ranked = [(record_of.get(records[i].model or "", -1.0), rng.random(), i) for i in slate]
    return max(ranked)[2]


def compare_picks(records: Sequence[LabelledRecord], slates: Sequence[Sequence[int]], scores: np.ndarray,
                  record_of: Mapping[str, float] | None, *, seed: int = 0, resamples: int = 200) -> dict[str, Any]:
    """The share of right picks of each method over the slates.

    Args:
        records: the labelled records the slates index.
        slates: from `draw_slates`.
        scores: the CRM's scores of the concatenated slates (`crm_eval.score_groups`).
        record_of: each model's share right on training questions (the fixed model's ranking); None
            leaves `best_fixed` out.
        seed: breaks ties of the vote and of unknown models.
        resamples: bootstrap resamples of questions for the intervals (0: none).
    """
    rng = random.Random(seed)
    per_question: dict[str, dict[str, list[int]]] = {}
    offset = 0
    for slate in slates:
        values = np.nan_to_num(scores[offset : offset + len(slate)], nan=-np.inf)  # a failed score never wins
        offset += len(slate)
        question = question_key(records[slate[0]])
        picks = {
            "crm": slate[int(np.argmax(values))],
            "vote": _vote(records, slate, rng),
            "best_fixed": _fixed(records, slate, record_of, rng) if record_of else None,
        }
        row = per_question.setdefault(question, {m: [] for m in METHODS})
        for method, pick in picks.items():
            if pick is not None:
                row[method].append(records[pick].label)
        row["oracle"].append(max(records[i].label for i in slate))
    if offset != len(scores):
        raise ValueError(f"{len(scores)} scores for {offset} slate entries")
    shares = {m: np.array([np.mean(row[m]) for row in per_question.values() if row[m]]) for m in METHODS}
    result: dict[str, Any] = {
        "k": len(slates[0]) if slates else None,
        "slates": len(slates),
        "n_questions": len(per_question),
    }
    for method in METHODS:
        result[method] = float(shares[method].mean()) if len(shares[method]) else None
    if result["crm"] is not None and result["vote"] is not None:
        result["crm_minus_vote"] = result["crm"] - result["vote"]
    if resamples and per_question:
        result["intervals"] = _intervals(shares, resamples, seed)
    return result


def _intervals(shares: Mapping[str, np.ndarray], resamples: int, seed: int) -> dict[str, list[float] | None]:
    rng = np.random.default_rng(seed)
    n = max(len(v) for v in shares.values())
    picks = rng.integers(0, n, size=(resamples, n))
    out: dict[str, list[float] | None] = {}
    for method, values in shares.items():
        if len(values) != n:
            out[method] = None
            continue
        means = values[picks].mean(axis=1)
        out[method] = [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))]
    if len(shares["crm"]) == n and len(shares["vote"]) == n:
        gains = (shares["crm"] - shares["vote"])[picks].mean(axis=1)
        out["crm_minus_vote"] = [float(np.percentile(gains, 2.5)), float(np.percentile(gains, 97.5))]
    return out
