"""The scorer interface every Collaborative Reward Model implementation follows.

A scorer turns a batch of candidate answers into values in [0, 1]. The batch for one subtask holds all
k candidates, so scorers that compare candidates (consensus) see them together. A scorer that cannot
score an item (a judge call that failed, a model that raised) says so with `failed_score`: the neutral
value, `failed=True`, and a reason that starts with "scorer failed: " for people; a run's records carry
the flag (`score_failed`), which is how failures are counted; a failure is never a silent 0. Scorers that can also
judge each step of a solution (a process reward model, the step verifier) implement `StepScoring`, which
is what ProcessBench-style evaluation asks for.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ModelRecord = tuple[float, int]
"""(reward sum, visits): a model's training record in the DADB."""


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
    record: ModelRecord | None = None
    """The training record of the agent's model over all its roles, when the run has one."""


SCORER_FAILED = "scorer failed: "
FAILED_VALUE = 0.5


@dataclass(frozen=True, slots=True)
class Score:
    """A scorer's verdict on one item: a value in [0, 1], when it was forced why, and whether scoring failed."""

    value: float
    reason: str | None = None
    failed: bool = False


def failed_score(reason: str) -> Score:
    """The score of an item the scorer could not judge: neutral, marked failed, the reason kept."""
    return Score(FAILED_VALUE, SCORER_FAILED + reason, failed=True)


def scorer_failures(candidates: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """How many recorded candidates (dicts with `score`, `score_failed` and `score_reason`) were scored, how
    many of those scores failed, and the first failure's reason."""
    scored = failed = 0
    first: str | None = None
    for candidate in candidates:
        if candidate.get("score") is None:
            continue
        scored += 1
        failed_flag = candidate.get("score_failed")
        if failed_flag is None:  # written by the release before the flag: its reason says so
            failed_flag = str(candidate.get("score_reason") or "").startswith(SCORER_FAILED)
        if failed_flag:
            failed += 1
            first = first or candidate.get("score_reason")
    return {"failed": failed, "scored": scored, "first": first}


class ScorerFailedError(RuntimeError):
    """Every item a scorer was asked about failed: there are no scores to evaluate or select by."""


class Scorer(ABC):
    """Scores batches of candidate answers. Subclasses implement `score_detailed`."""

    name: str = "scorer"
    blocking: bool = True
    """Whether `score_detailed` may block (run a model, call a server, read files), so that the engine
    calls it off the event loop; a scorer that only computes on its items says False and is called in place."""
    discrimination: float = 0.0
    """How far apart its probabilities for one model's right and wrong lone answers lie, on average over the
    models (Tjur's coefficient of discrimination, within model, measured where the scorer was fitted): 1
    tells them apart perfectly, 0 not at all (a score that only reads the model's record, or one never
    measured). The priced asking policy plans a check of a cheap answer by it
    (`reso.graphs.priced_asking`)."""

    @abstractmethod
    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        """One Score per item, in order. Must not raise on bad answers: score 0 with a reason."""

    def score(self, items: Sequence[ScoreItem]) -> list[float]:
        return [score.value for score in self.score_detailed(items)]


class StepScoring(ABC):
    """A scorer that also judges each step of a solution: the probability that the step is right."""

    @abstractmethod
    def score_steps(self, items: Sequence[ScoreItem], steps: Sequence[Sequence[str]]) -> list[list[float]]:
        """One value in [0, 1] per step of each item's solution (`steps[i]` are item i's step texts)."""


def first_error_step(step_scores: Sequence[float], threshold: float = 0.5) -> int:
    """The index of the first step scored below `threshold`, -1 when none is (ProcessBench's convention)."""
    return next((index for index, value in enumerate(step_scores) if value < threshold), -1)


class GroupScorer(Scorer):
    """A scorer that judges the candidates of one subtask together: items sharing `ScoreItem.group` (or,
    without one, the subtask text) form a group. Subclasses implement `score_group`."""

    @abstractmethod
    def score_group(self, group: list[ScoreItem]) -> list[Score]:
        """One Score per item of one group, in order."""

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        groups: dict[str, list[int]] = {}
        for index, item in enumerate(items):
            groups.setdefault(item.group if item.group is not None else f"subtask:{item.subtask}", []).append(index)
        scores: list[Score] = [Score(0.0)] * len(items)
        for members in groups.values():
            for index, score in zip(members, self.score_group([items[i] for i in members]), strict=True):
                scores[index] = score
        return scores
