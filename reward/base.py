"""The scorer interface every Collaborative Reward Model implementation follows.

A scorer turns a batch of candidate answers into values in [0, 1]. The batch for one subtask holds all
k candidates, so scorers that compare candidates (consensus) see them together.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One candidate answer to score, with everything a scorer may look at."""

    subtask: str
    answer: str
    context: str = ""
    agent_id: str = ""
    model: str | None = None
    reputation: float | None = None
    reference: str | None = None
    domain: str | None = None
    group: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Score:
    """A scorer's verdict on one item: a value in [0, 1] and, when it was forced, why."""

    value: float
    reason: str | None = None


class Scorer(ABC):
    """Scores batches of candidate answers. Subclasses implement `score_detailed`."""

    name: str = "scorer"

    @abstractmethod
    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        """One Score per item, in order. Must not raise on bad answers: score 0 with a reason."""

    def score(self, items: Sequence[ScoreItem]) -> list[float]:
        return [score.value for score in self.score_detailed(items)]
