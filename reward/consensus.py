"""Consensus scorer: how much of the candidates' (reputation-weighted) vote an answer's value gets.

Candidates for the same subtask form a group (`ScoreItem.group`, or the subtask text when it is None).
An answer's score is the reputation-weighted share of the group's candidates whose final answer matches
it (weights are `ScoreItem.reputation`, 1.0 when unknown; all-zero weights count equally). Candidates
without an extractable answer score 0 and still count in the denominator, so agreeing with a failed
call is not free.

A lone candidate has nobody to agree with: it gets its prior, the agent's reputation clamped to
[0, 1] (the DADB's smoothed mean reward), or `lone_prior` (0.5) when the reputation is unknown.
"""

from __future__ import annotations

from reso.reward.answers import answers_match, extract_answer
from reso.reward.base import GroupScorer, Score, ScoreItem


class ConsensusScorer(GroupScorer):
    """Reputation-weighted agreement among the candidates of one subtask."""

    name = "consensus"
    blocking = False  # compares the items' answers, nothing else

    def __init__(self, *, rel_tol: float = 0.01, lone_prior: float = 0.5) -> None:
        """Configure the vote.

        Args:
            rel_tol: Relative tolerance under which two numeric answers count as the same.
            lone_prior: Score of a lone candidate whose reputation is unknown.
        """
        if not 0 <= lone_prior <= 1:
            raise ValueError(f"lone_prior must be in [0, 1], got {lone_prior}")
        self.rel_tol = rel_tol
        self.lone_prior = lone_prior

    def score_group(self, group: list[ScoreItem]) -> list[Score]:
        answers = [extract_answer(item.answer) if isinstance(item.answer, str) else None for item in group]
        if len(group) == 1:
            if answers[0] is None:
                return [Score(0.0, _no_answer_reason(group[0]))]
            reputation = group[0].reputation
            if reputation is None:
                return [Score(self.lone_prior, "single candidate: prior, reputation unknown")]
            return [Score(min(max(float(reputation), 0.0), 1.0), "single candidate: its reputation")]
        weights = [_weight(item) for item in group]
        if sum(weights) <= 0:
            weights = [1.0] * len(group)
        total = sum(weights)
        same: dict[tuple[int, int], bool] = {}
        scores = []
        for i, answer in enumerate(answers):
            if answer is None:
                scores.append(Score(0.0, _no_answer_reason(group[i])))
                continue
            support = 0.0
            for j, other in enumerate(answers):
                if other is None:
                    continue
                key = (min(i, j), max(i, j))
                if key not in same:
                    same[key] = i == j or answers_match(answer, other, rel_tol=self.rel_tol)
                support += weights[j] if same[key] else 0.0
            scores.append(Score(support / total))
        return scores


def _weight(item: ScoreItem) -> float:
    if item.reputation is None:
        return 1.0
    try:
        weight = float(item.reputation)
    except (TypeError, ValueError):
        return 1.0
    return weight if weight > 0 and weight != float("inf") else 0.0


def _no_answer_reason(item: ScoreItem) -> str:
    if not isinstance(item.answer, str) or not item.answer.strip():
        return "empty answer"
    return "no final answer found"
