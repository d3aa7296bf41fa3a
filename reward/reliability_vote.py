"""Reliability-weighted vote: the probability that an answer is right, from who agrees with it.

The candidates of one subtask (a group) are clustered by answer equivalence. Each agent `a` is right with
probability `p_a`, its model's training record smoothed with a prior of one half, `(rewards + 1) / (visits +
2)`. Treating the agents as independent, and two wrong answers as coinciding with probability `q` (wrong
answers scatter; right ones coincide), the posterior that cluster `c` holds the right answer, against every
other cluster and "none of them is right", is

    P(c) = exp(L_c) / (1 + sum over clusters d of exp(L_d)),
    L_c  = sum over a in c of logit(p_a) + (|c| - 1) * ln(1 / q).

So one strong agent can outweigh two weak agents that agree (logit 0.85 = 1.7; two agents at 0.5 and 0.44
give -0.2 + ln 5 = 1.4 with q = 0.2), agreement of strong agents gives a confident score, and a lone answer
of an unknown agent gets one half. Agents of one model count once. This is the classical optimal weighted majority (weights are log-odds
of reliability) with a coincidence term, written out here because no maintained library scores LLM
candidates this way. Scores are probabilities, so an adaptive fine stage can compare them with a
confidence threshold.

Each item's record comes as `ScoreItem.record = (reward_sum, visits)`; without one, the item's
`reputation` is used as `p_a`, and without either, one half.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from reso.reward.answers import answers_match, extract_answer
from reso.reward.base import GroupScorer, Score, ScoreItem

_P_FLOOR = 0.02


def record_reliability(reward_sum: float, visits: float) -> float:
    """A training record as a probability of being right: the mean reward with a prior of one half."""
    return (float(reward_sum) + 1.0) / (float(visits) + 2.0)


def reliability(item: ScoreItem) -> float:
    """The probability that the item's agent is right, clamped to [0.02, 0.98]."""
    if item.record is not None:
        p = record_reliability(*item.record)
    elif item.reputation is not None:
        p = float(item.reputation)
    else:
        p = 0.5
    return min(max(p, _P_FLOOR), 1.0 - _P_FLOOR)


class ReliabilityVoteScorer(GroupScorer):
    """Posterior probability that each answer is right, from the reliabilities of the agents behind it."""

    name = "reliability"

    def __init__(self, coincidence: float | str = 0.2, *, rel_tol: float = 0.01) -> None:
        """Configure the vote.

        Args:
            coincidence: q, the chance that two wrong answers to one subtask are equal (a spec gives it as
                text: "reliability:0.15"). `coincidence_rate` measures it on labelled records.
            rel_tol: Relative tolerance under which two numeric answers count as the same.
        """
        q = float(coincidence)
        if not 0.0 < q < 1.0:
            raise ValueError(f"coincidence must be between 0 and 1, got {coincidence}")
        self.bonus = math.log(1.0 / q)
        self.rel_tol = rel_tol

    def score_group(self, group: list[ScoreItem]) -> list[Score]:
        values = [extract_answer(item.answer) if isinstance(item.answer, str) else None for item in group]
        clusters: list[list[int]] = []
        heads: list[str] = []  # each cluster's first answer, the one later answers are matched against
        for i, value in enumerate(values):
            if value is None:
                continue
            home = next((c for c, head in zip(clusters, heads, strict=True)
                         if answers_match(value, head, rel_tol=self.rel_tol)), None)
            if home is None:
                clusters.append([i])
                heads.append(value)
            else:
                home.append(i)
        logits = [self._support([group[i] for i in c]) for c in clusters]
        top = max([0.0, *logits])
        norm = math.exp(-top) + sum(math.exp(x - top) for x in logits)
        scores = [Score(0.0, "no final answer found")] * len(group)
        for cluster, logit in zip(clusters, logits, strict=True):
            for i in cluster:
                scores[i] = Score(math.exp(logit - top) / norm)
        return scores


    def _support(self, cluster: list[ScoreItem]) -> float:
        """L_c, counting each model once: two roles of one model repeat one answer, they do not confirm it."""
        voters = {item.model if item.model is not None else f"item:{i}": item for i, item in enumerate(cluster)}
        return sum(_logit(reliability(item)) for item in voters.values()) + (len(voters) - 1) * self.bonus


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def coincidence_rate(values_by_question: Sequence[Sequence[str]], *, rel_tol: float = 0.01) -> float | None:
    """How often two wrong answers to the same question are equal: over every pair of wrong final values of
    one question. None when no question has two wrong answers."""
    pairs = same = 0
    for values in values_by_question:
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                pairs += 1
                same += answers_match(values[i], values[j], rel_tol=rel_tol)
    return same / pairs if pairs else None
