"""Features of one candidate answer among its peers: the in-context half of the learned small CRM.

The candidates of one subtask (a group) are clustered by final answer (`answer_features.answer_key`:
equal values or equal normalised text). Each answer brings its own evidence, the logit of the answer
model's probability that it is right (which already holds the agent's reputation or its model's record);
as in the reliability-weighted vote (`reward/reliability_vote.py`), a cluster's evidence is the sum of its
members' logits plus a bonus of ln(1/q) per extra member (two wrong answers coincide with probability q),
and the posterior of a cluster is exp(L_c) / (1 + sum over clusters d of exp(L_d)). The group model
learns how far to trust that posterior, the share of peers that agree, the strongest rival cluster, and
whether a peer's result appears in this answer's working (or this one's in theirs), and is calibrated on
groups of the sizes seen at scoring time, one answer alone included.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from reso.agents.profiles import portable_model
from reso.reward.answer_features import Solution
from reso.reward.base import ScoreItem
from reso.reward.labelled_records import LabelledRecord, question_key

PEER_FEATURES = (
    "answer_logit",
    "log_peers",
    "agree_share",
    "agree_any",
    "cluster_logit",
    "rival_logit",
    "vote_posterior",
    "plurality",
    "cluster_count_share",
    "peer_final_in_text",
    "final_in_peer_text",
)
# Logits are clipped so one overconfident answer model cannot swamp a cluster sum.
_LOGIT_CLIP = 6.0
_NO_RIVAL = -_LOGIT_CLIP


@dataclass(frozen=True, slots=True)
class Candidate:
    """One answer to score: the question, its text, its group of peers, who wrote it, their reputation."""

    question: str
    answer: str
    group: str
    model: str | None = None
    reputation: float | None = None


def groups_of(labels: Sequence[str]) -> dict[str, list[int]]:
    """Indices by group label, groups in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        groups.setdefault(label, []).append(index)
    return groups


def candidates_from_records(records: Sequence[LabelledRecord]) -> list[Candidate]:
    """Candidates for the CRM, grouped by question."""
    return [
        Candidate(question=r.instruction, answer=r.answer, group=question_key(r),
                  model=portable_model(r.model) if r.model else r.agent_id)
        for r in records
    ]


def candidates_from_items(items: Sequence[ScoreItem]) -> list[Candidate]:
    """Candidates for the CRM, grouped by `ScoreItem.group` (else by subtask)."""
    return [
        Candidate(
            question=item.subtask,
            answer=item.answer,
            group=item.group if item.group is not None else item.subtask,
            model=portable_model(item.model) if item.model else item.agent_id or None,
            reputation=item.reputation,
        )
        for item in items
    ]


def _final_value(solution: Solution) -> float | None:
    if solution.key is None:
        return None
    try:
        return float(solution.key)
    except ValueError:
        return None


def _group_rows(solutions: Sequence[Solution], logits: np.ndarray, bonus: float) -> list[list[float]]:
    n = len(solutions)
    clipped = np.clip(logits, -_LOGIT_CLIP, _LOGIT_CLIP)
    clusters: dict[str, list[int]] = {}
    for i, solution in enumerate(solutions):
        if solution.key is not None:
            clusters.setdefault(solution.key, []).append(i)
    evidence = {key: float(clipped[members].sum()) + (len(members) - 1) * bonus for key, members in clusters.items()}
    top = max([0.0, *evidence.values()])
    norm = math.exp(-top) + sum(math.exp(v - top) for v in evidence.values())
    largest = max((len(members) for members in clusters.values()), default=0)
    values = [_final_value(s) for s in solutions]
    rows = []
    for i, solution in enumerate(solutions):
        peers = n - 1
        key = solution.key
        own = len(clusters[key]) - 1 if key is not None else 0
        rivals = [v for k, v in evidence.items() if k != key]
        others = [j for j in range(n) if j != i]
        rows.append([
            float(logits[i]),
            math.log1p(peers),
            own / peers if peers else 0.5,
            float(own > 0),
            evidence[key] if key is not None else float(clipped[i]),
            max(rivals, default=_NO_RIVAL),
            math.exp(evidence[key] - top) / norm if key is not None else 0.0,
            float(key is not None and own + 1 == largest),
            len(clusters) / n,
            sum(values[j] is not None and values[j] in solution.numbers for j in others) / peers if peers else 0.0,
            sum(values[i] is not None and values[i] in solutions[j].numbers for j in others) / peers if peers else 0.0,
        ])
    return rows


def peer_features(
    solutions: Sequence[Solution], groups: Sequence[str], logits: np.ndarray, *, coincidence: float = 0.2
) -> np.ndarray:
    """The PEER_FEATURES of each answer, its peers being the answers that share its group label.

    Args:
        solutions: every answer, read by `answer_features.read_solution`.
        groups: one group label per answer.
        logits: one answer-model logit per answer (its own evidence of being right).
        coincidence: q, the chance that two wrong answers coincide (the agreement bonus is ln(1/q)).

    Returns:
        An array of shape (len(solutions), len(PEER_FEATURES)), rows in the answers' order.
    """
    if not len(solutions) == len(groups) == len(logits):
        raise ValueError(f"{len(solutions)} solutions, {len(groups)} group labels and {len(logits)} logits")
    out = np.zeros((len(solutions), len(PEER_FEATURES)))
    bonus = math.log(1.0 / coincidence)
    for members in groups_of(groups).values():
        out[members] = _group_rows([solutions[i] for i in members], np.asarray(logits)[members], bonus)
    return out


@functools.lru_cache(maxsize=1)
def _embedder() -> Any:
    from reso.agents.selection.embeddings import load_embedder

    return load_embedder("minilm")


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """MiniLM sentence embeddings from the bundled offline encoder (loaded once, disk-cached by text)."""
    return np.asarray(_embedder().embed(list(texts)), dtype=np.float64).reshape(len(texts), -1)
