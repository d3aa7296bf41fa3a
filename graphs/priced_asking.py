"""Asking that pays for itself: the fine stage's default policy, driven by what a right answer is worth.

Everything is counted in units of V, the value of a right answer (the budget knob): a candidate's price is
its expected cost per call / V (`expected_price`), and a plan's worth is its chance of ending with a right
answer less the prices it pays. q_j is how often candidate j's model was right in training, w_j how often
where the models asked so far were wrong (its record, lowered by how often its mistakes went with theirs:
`PeerErrors.right_given_wrong`; its record when no error table is known), and s how well the scorer tells a
right answer from a wrong one (`Scorer.discrimination`, measured where the scorer was fitted: 0 for a score
that only reads records).

**One more answer.** With p the probability that the best answer so far is right (the scorer's: a
calibrated CRM's, or the peer posterior's once several answers agree), candidate j's answer agrees with it
with probability P_a = p q_j + (1 − p)(1 − w_j) κ (κ: how often two wrong answers of the two models
coincide, `PeerErrors.coincidence`), after which the best answer is right with probability p q_j / P_a. It
disagrees otherwise; then the best answer is right with probability a = p (1 − q_j) / (1 − P_a), j's with
b = (1 − p) w_j / (1 − P_a), and the scorer keeps the right one of the two with probability
max(a, b) + s · min(a, b): by the likelier alone when it cannot tell them apart (s = 0), always when it can
(s = 1). Asking j and stopping is worth

    step(p, j) = − price_j + p q_j + (1 − P_a) · (max(a, b) + s · min(a, b)).

**Whether to ask, and whom.** The policy looks two answers ahead: asking j now is worth its price less, plus
each outcome's chance times what the best next step is then worth, next(p') = max(p', max over the other
models' candidates k of step(p', k)). The candidate worth most is asked when that beats stopping (p), until
`k_max` have answered. Looking two ahead is what makes a cheap peer worth asking before a dear model: its
agreement raises p enough to stop, and its disagreement is what sends the subtask on. A confidently right
answer is never checked; at a low value one candidate answers each subtask.

**Who answers first.** The coarse stage offers a slate ranked by net value (q × V − price,
`reso.agents.selection.scoring`); the first to answer is the one whose answer, followed by the best next
step, is worth most:

    − price_i + q_i · next(q_i + s (1 − q_i)) + (1 − q_i) · next(q_i (1 − s)),

the scorer's probability for i's answer being q_i + s (1 − q_i) when it is right and q_i (1 − s) when it is
wrong (a calibrated score whose mean is q_i and whose right and wrong answers lie s apart). With a scorer
that tells right from wrong, a cheap model goes first whenever checking its doubtful answers costs less than
asking the strong model every time; with one that cannot (s = 0) the strong model goes first unless its
price outweighs its edge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reso.agents.selection.selector import Candidate
from reso.graphs.asking import Asked, Reliability, known_records, model_of
from reso.reward.peer_errors import PeerErrors

__all__ = ["DEFAULT_K_MAX", "PricedAsking", "expected_price"]

DEFAULT_K_MAX = 4
"""The most answers a subtask gets when the settings name no `k_max`."""
COINCIDENCE = 0.2
"""How often two wrong answers coincide when no error table says (`PeerErrors`' own default)."""
FIT_SHARE = 0.5
"""A candidate is asked only when its profile fits the subtask at least this share as well as the best-fitting
candidate's (the coarse stage's similarity gate): the value plan reads records and prices, and a free exact
tool would otherwise be tried on every word problem."""


def expected_price(candidate: Candidate) -> float:
    """The coarse stage's expected USD per call of the candidate (its record's mean, smoothed with a
    list-price call); 0 for a candidate built without one (a pinned baseline's, the exact tool's)."""
    return float(candidate.components.get("mean_cost", 0.0))


def _clip(p: float) -> float:
    return min(max(p, 0.0), 1.0)


def _fitting(candidates: Sequence[Candidate]) -> list[int]:
    """The candidates whose profile fits the subtask well enough to be asked (`FIT_SHARE`), in order; a
    candidate built without a gate (a pinned baseline's) fits."""
    gates = [float(c.components.get("gate", 1.0)) for c in candidates]
    best = max(gates, default=0.0)
    return [i for i, gate in enumerate(gates) if gate >= FIT_SHARE * best]


@dataclass(frozen=True)
class _Check:
    """What the policy knows of one candidate it might ask next: q, w, κ with the best answer's model, and
    its price in units of the value."""

    right: float
    right_where_wrong: float
    coincide: float
    price: float

    def outcomes(self, p: float, s: float) -> tuple[float, float, float]:
        """(chance of agreeing, the best answer's chance after an agreement, after a disagreement)."""
        agree = p * self.right + (1.0 - p) * (1.0 - self.right_where_wrong) * self.coincide
        if agree <= 0.0:
            after_agree = p
        else:
            after_agree = p * self.right / agree
        if agree >= 1.0:
            return agree, after_agree, p
        kept, other = p * (1.0 - self.right) / (1.0 - agree), (1.0 - p) * self.right_where_wrong / (1.0 - agree)
        return agree, after_agree, max(kept, other) + s * min(kept, other)

    def step(self, p: float, s: float) -> float:
        """Asking it and stopping: its price less, plus the chance of then ending with a right answer."""
        agree, after_agree, after_disagree = self.outcomes(p, s)
        return -self.price + agree * after_agree + (1.0 - agree) * after_disagree


@dataclass(frozen=True)
class PricedAsking:
    """The first candidate worth most with its best next step; then, while one is worth more than stopping
    and fewer than `k_max` have answered, the candidate worth most two answers ahead (module docstring)."""

    answer_value_usd: float
    k_max: int = DEFAULT_K_MAX
    slate: int = 16
    """How many candidates the coarse stage offers: a check may come from a strong model it ranked low."""
    errors: PeerErrors | None = None
    """How the pool's models' mistakes go together (measured in training); without it a candidate's chance
    of being right where the others were wrong is its record, and two wrong answers coincide `COINCIDENCE`
    of the time."""
    discrimination: float = 0.0
    """The scorer's `discrimination` s."""

    def __post_init__(self) -> None:
        if not self.answer_value_usd > 0:
            raise ValueError(f"answer_value_usd must be > 0, got {self.answer_value_usd}")
        if self.k_max < 1:
            raise ValueError(f"k_max must be >= 1, got {self.k_max}")
        if not 0.0 <= self.discrimination <= 1.0:
            raise ValueError(f"discrimination must be in [0, 1], got {self.discrimination}")

    def pool_size(self, k: int) -> int:
        return max(self.k_max, self.slate)

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Reliability | None = None) -> list[int]:
        fitting = _fitting(candidates)
        if len(fitting) < 2:
            return fitting[:1]
        known = known_records(candidates, reliability)
        worth = {i: self._first_worth(i, candidates, known, fitting) for i in fitting}
        return [max(fitting, key=lambda i: (worth[i], -i))]

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Reliability | None = None) -> list[int]:
        if len(asked) >= self.k_max:
            return []
        valued = [a for a in asked if a.value is not None and a.score is not None]
        best = max(valued, key=lambda a: a.score or 0.0, default=None)
        p = _clip(best.score or 0.0) if best is not None else 0.0
        # Another role of a model already asked would replay or repeat the same answer, not check it.
        asked_models = {model_of(candidates[a.index]) for a in asked}
        rest = [i for i in _fitting(candidates) if model_of(candidates[i]) not in asked_models]
        if p >= 1.0 or not rest:
            return []
        known = known_records(candidates, reliability)
        names = [candidates[a.index].agent.model.model_name for a in asked]
        kept = candidates[best.index].agent.model.model_name if best is not None else None
        room = self.k_max - len(asked) - 1
        worth = {j: self._ask_worth(j, p, candidates, known, names, kept, rest, room) for j in rest}
        chosen = max(rest, key=lambda j: (worth[j], -j))
        return [chosen] if worth[chosen] > p + 1e-12 else []

    def keep(self, asked: Sequence[Asked]) -> int | None:
        return None

    def _price(self, candidate: Candidate) -> float:
        """The candidate's expected price in units of the value of a right answer (0 at an infinite value)."""
        return 0.0 if math.isinf(self.answer_value_usd) else expected_price(candidate) / self.answer_value_usd

    def _check(self, candidate: Candidate, record: float, asked: Sequence[str], kept: str | None) -> _Check:
        """The candidate as a next answer after the models `asked`, the best answer being `kept`'s."""
        record = _clip(record)
        then = candidate.agent.model.model_name
        if self.errors is None or not asked:
            right_where_wrong, coincide = record, COINCIDENCE
        else:
            right_where_wrong = min(self.errors.right_given_wrong(first, then, record) for first in asked)
            coincide = self.errors.coincidence(kept, then)
        return _Check(record, right_where_wrong, coincide, self._price(candidate))

    def _next(self, candidates: Sequence[Candidate], known: Sequence[float], asked: Sequence[str],
              kept: str | None, among: Sequence[int]) -> Callable[[float], float]:
        """next(p): stopping at p, or the best single step among the candidates `among`."""
        checks = [self._check(candidates[k], known[k], asked, kept) for k in among]
        s = self.discrimination
        return lambda p: max((p, *(check.step(p, s) for check in checks)))

    def _first_worth(self, i: int, candidates: Sequence[Candidate], known: Sequence[float],
                     among: Sequence[int]) -> float:
        """What asking candidate i first is worth, its best next step (one of `among`) included (module
        docstring)."""
        q = _clip(known[i])
        name = candidates[i].agent.model.model_name
        others = [j for j in among if model_of(candidates[j]) != model_of(candidates[i])]
        then = self._next(candidates, known, [name], name, others if self.k_max > 1 else [])
        s = self.discrimination
        return -self._price(candidates[i]) + q * then(q + s * (1.0 - q)) + (1.0 - q) * then(q * (1.0 - s))

    def _ask_worth(self, j: int, p: float, candidates: Sequence[Candidate], known: Sequence[float],
                   names: Sequence[str], kept: str | None, rest: Sequence[int], room: int) -> float:
        """What asking candidate j now is worth, the best answer so far (from the model `kept`) being right with
        probability `p`, with `room` answers allowed after it (module docstring)."""
        check = self._check(candidates[j], known[j], names, kept)
        agree, after_agree, after_disagree = check.outcomes(p, self.discrimination)
        others = [k for k in rest if model_of(candidates[k]) != model_of(candidates[j])] if room > 0 else []
        then = self._next(candidates, known, [*names, candidates[j].agent.model.model_name], kept, others)
        return -check.price + agree * then(after_agree) + (1.0 - agree) * then(after_disagree)
