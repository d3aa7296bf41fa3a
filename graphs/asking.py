"""What every asking policy of the fine stage shares: the protocol, what a policy is shown of an answer, and
how it reads a candidate's model and record, and which asked models' other roles would add nothing.

The policies themselves: the paper's fixed k, the confidence-threshold stage and the cascade
(`reso.graphs.escalation`), and asking that pays for itself (`reso.graphs.priced_asking`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from reso.agents.profiles import Provider
from reso.agents.selection.selector import Candidate
from reso.reward.reliability_vote import record_reliability

__all__ = ["Asked", "AskingPolicy", "Reliability", "known_records", "model_of", "record_of", "settled_models"]

# Asked for only when a policy needs it: reading every offered model's record costs DADB queries.
Reliability = Callable[[], Sequence[float] | None]


@dataclass(frozen=True, slots=True)
class Asked:
    """What a policy knows of one candidate that answered: its index, final value and CRM score."""

    index: int
    value: str | None
    score: float | None
    round: int = 0
    """0 for the first round of asking, 1 for the first escalation, and so on."""


class AskingPolicy(Protocol):
    """Decides which candidates answer a subtask, round by round."""

    def slate_size(self, k: int) -> int:
        """How many candidates the coarse stage should return (the most that may ever be asked)."""
        ...

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Reliability | None = None) -> list[int]:
        """Indices of the candidates that answer first (`reliability` as for `more`)."""
        ...

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Reliability | None = None) -> list[int]:
        """Indices of further candidates to ask now, given every answer so far (and, on request, how often
        each candidate's model was right in training: `reliability()`, None when unknown); empty to stop."""
        ...

    def keep(self, asked: Sequence[Asked]) -> int | None:
        """The index of the answer to keep, or None to keep the best-scored one."""
        ...


def record_of(candidate: Candidate) -> float:
    """The coarse stage's estimate of how often the candidate is right, with a prior of one half (an agent
    seen rarely is not taken for a reliable one); one half for a candidate the coarse stage did not score."""
    return record_reliability(*candidate.terms.record) if candidate.terms is not None else 0.5


def model_of(candidate: Candidate) -> str:
    return candidate.agent.model.spec


ROLE_BLIND = frozenset({Provider.REPLAY, Provider.TOOL})
"""Providers whose answer to a question is the same in every role: a recording, an exact tool."""


def settled_models(candidates: Sequence[Candidate], asked: Sequence[Asked]) -> set[str]:
    """The models (`model_of`) another role of which would add nothing to the answers so far: each asked model
    that answered (a second role's mistakes go with the first's: not a check) and each role-blind one asked
    (`ROLE_BLIND`: it would give the same answer, or the same failure, again). A live model whose call gave
    no answer (an unreadable one, a timeout) stays open: another role is another prompt, a fair second try."""
    settled = set()
    for a in asked:
        candidate = candidates[a.index]
        if a.value is not None or candidate.agent.model.provider in ROLE_BLIND:
            settled.add(model_of(candidate))
    return settled


def known_records(candidates: Sequence[Candidate], reliability: Reliability | None) -> Sequence[float]:
    """How often each candidate's model was right in training: the engine's records when it has them,
    else the coarse stage's (`record_of`)."""
    records = reliability() if reliability is not None else None
    return records if records is not None else [record_of(c) for c in candidates]
