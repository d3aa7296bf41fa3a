"""Asking that pays for itself: the fine stage's default policy, driven by what a right answer is worth.

Everything is counted in units of V, the value of a right answer (the budget knob): a candidate's price is
its expected cost per call / V (`expected_price`), and a plan's worth is its chance of ending with a right
answer less the prices it pays. q_j is how often candidate j's model was right in training (on this
subtask's nearest past ones, with question skills), w_j how often where the models asked so far were wrong
(the least of `PeerErrors.right_given_wrong` over them; q_j when no error table is known), κ how often two
wrong answers of j's model and the best answer's coincide (`PeerErrors.coincidence`), and s how well the
scorer tells a right answer from a wrong one (`Scorer.discrimination`, measured where the scorer was fitted:
0 for a score that only reads records).

**One more answer.** With the best answer so far right with probability p (the scorer's: a calibrated CRM's,
or the peer posterior's once several answers agree), j's answer agrees with it with probability
P_a = p q_j + (1 − p)(1 − w_j) κ, after which it is right with probability p q_j / P_a. It disagrees
otherwise; then the best answer is right with probability a = p (1 − q_j) / (1 − P_a), j's with
b = (1 − p) w_j / (1 − P_a), and the scorer keeps the right one of the two with probability
max(a, b) + s · min(a, b): by the likelier alone when it cannot tell them apart (s = 0), always when it can
(s = 1).

**Whether to ask, and whom.** The worth of stopping at p is p; the worth of asking j is its price less, plus
each outcome's chance times the worth of the best thing to do then. After an answer the policy looks two
answers ahead (asking j, then the best next answer or stopping) and asks the candidate worth most while it is
worth more than stopping, until `k_max` have answered: that is what makes a cheap peer worth asking before a
dear model, when its agreement raises p enough to stop and its disagreement is what sends the subtask on. A
confidently right answer is never checked; at a low value one candidate answers each subtask.

**Who answers first.** The coarse stage offers a slate ranked by net value (q × V − price,
`reso.agents.selection.scoring`); the first to answer is the one worth most with the best single answer after
it, the scorer's probability for its answer being q_i + s (1 − q_i) when it is right and q_i (1 − s) when it
is wrong (a calibrated score whose mean is q_i and whose right and wrong answers lie s apart). So a cheap
model goes first where checking its doubtful answers costs less than asking the strong model every time.
Two richer plans were tried and left out: looking further ahead at the first pick, and reading an agreement
as more telling than independent answers (models tend to be right on the same easier questions). On the main
job's MATH test composites both asked more cheap models for less accuracy at every value of the knob (79 %
→ 66–71 % at $0.01, 89 % → 82–83 % at $0.03): the plan then trusts its model of the scorer more than the
scorer bears out. That comparison was made on test composites, so it is a design choice, not a measured gain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reso.agents.selection.selector import Candidate
from reso.graphs.asking import Asked, Reliability, known_records, model_of, settled_models
from reso.graphs.asking_config import DEFAULT_K_MAX
from reso.reward.peer_errors import PeerErrors

__all__ = ["PricedAsking", "expected_price"]

COINCIDENCE = 0.2
"""How often two wrong answers coincide when no error table says (`PeerErrors`' own default)."""
FIT_SHARE = 0.5
"""A candidate is asked only when its profile fits the subtask at least this share as well as the best-fitting
candidate's (the coarse stage's similarity gate): the plan reads records and prices, and a free exact tool
would otherwise be tried on every word problem."""


def expected_price(candidate: Candidate) -> float:
    """The coarse stage's expected USD per call of the candidate (its record's mean, smoothed with a
    list-price call); 0 for a candidate the coarse stage did not score (a pinned baseline's, the exact
    tool's, a random draw)."""
    return candidate.terms.mean_cost if candidate.terms is not None else 0.0


def _fitting(candidates: Sequence[Candidate]) -> list[int]:
    """The candidates whose profile fits the subtask well enough to be asked (`FIT_SHARE`), in order; a
    candidate the coarse stage did not score (a pinned baseline's) fits."""
    gates = [c.terms.gate if c.terms is not None else 1.0 for c in candidates]
    best = max(gates, default=0.0)
    return [i for i, gate in enumerate(gates) if gate >= FIT_SHARE * best]


@dataclass(frozen=True)
class _Plan:
    """What planning reads of the offered candidates (indexed as offered): records, prices in units of the
    value, how often each was right where another candidate's model was wrong (W, row: that model) and how
    often two wrong answers coincide (κ), and which candidates share a model."""

    right: np.ndarray
    price: np.ndarray
    given_wrong: np.ndarray
    coincide: np.ndarray
    same_model: np.ndarray
    discrimination: float

    def outcomes(self, p: np.ndarray, wrong: np.ndarray, coincide: np.ndarray, j: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For asking `j` when the best answer so far is right with probability `p` (`wrong`: each one's
        chance of being right where the models asked were wrong; `coincide`: κ with the best answer's model;
        arrays that broadcast): the chance of agreeing, the best answer's chance after an agreement and after
        a disagreement, and whether j's answer is then the likelier (module docstring)."""
        r = self.right[j]
        agree = p * r + (1.0 - p) * (1.0 - wrong) * coincide
        after_agree = np.divide(p * r, agree, out=np.broadcast_to(p, agree.shape).astype(float), where=agree > 0)
        rest = np.maximum(1.0 - agree, 1e-12)
        kept, other = p * (1.0 - r) / rest, (1.0 - p) * wrong / rest
        after_disagree = np.maximum(kept, other) + self.discrimination * np.minimum(kept, other)
        return agree, after_agree, after_disagree, other > kept

    def stop_or_step(self, p: np.ndarray, wrong: np.ndarray, coincide: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """For each case (a row: the best answer's probability p of being right; each candidate's chance of
        being right where those asked were wrong, κ with the best answer's model, and whether it may be asked):
        the best of stopping and asking one more (then stopping)."""
        columns = np.arange(len(self.right))[None, :]
        agree, after_agree, after_disagree, _ = self.outcomes(p[:, None], wrong, coincide, columns)
        step = -self.price[None, :] + agree * after_agree + (1.0 - agree) * after_disagree
        return np.maximum(p, np.max(np.where(allowed, step, -np.inf), axis=1, initial=-np.inf))

    def ask(self, p: float, wrong: np.ndarray, kept: int, allowed: np.ndarray, depth: int) -> np.ndarray:
        """The worth of asking each candidate (NaN where not `allowed`), the best answer being candidate
        `kept`'s, right with probability p (`wrong`: each candidate's chance of being right where the models
        asked so far were wrong), looking `depth` answers ahead (1: ask it and stop; 2: then the best next or
        stop)."""
        worth = np.full(len(self.right), np.nan)
        j = np.flatnonzero(allowed)
        if not len(j):
            return worth
        agree, after_agree, after_disagree, switched = self.outcomes(np.full(len(j), p), wrong[j],
                                                                     self.coincide[kept, j], j)
        if depth > 1:
            then = allowed[None, :] & ~self.same_model[j]
            # Where the models asked and j were all wrong: the least of the chances given each wrong.
            wrong_then = np.minimum(wrong[None, :], self.given_wrong[j])
            # After a disagreement the best answer may be j's: the coincidence is then with j's model.
            best_after = np.where(switched, j, kept)
            after_agree = self.stop_or_step(after_agree, wrong_then, self.coincide[np.full(len(j), kept)], then)
            after_disagree = self.stop_or_step(after_disagree, wrong_then, self.coincide[best_after], then)
        worth[j] = -self.price[j] + agree * after_agree + (1.0 - agree) * after_disagree
        return worth

    def first(self, i: int, allowed: np.ndarray) -> float:
        """The worth of asking candidate i first, then the best single answer after it or stopping (module
        docstring)."""
        q, s = float(self.right[i]), self.discrimination
        others = allowed & ~self.same_model[i]

        def then(p: float) -> float:
            if not others.any():
                return p
            return max(p, float(np.nanmax(self.ask(p, self.given_wrong[i], i, others, depth=1))))

        return -float(self.price[i]) + q * then(q + s * (1.0 - q)) + (1.0 - q) * then(q * (1.0 - s))


@dataclass(frozen=True)
class PricedAsking:
    """The first candidate worth most with the best answer after it; then, while one is worth more than
    stopping and fewer than `k_max` have answered, the candidate worth most two answers ahead (module
    docstring)."""

    answer_value_usd: float
    k_max: int = DEFAULT_K_MAX
    slate: int = 16
    """How many candidates the coarse stage offers: a check may come from a strong model it ranked low."""
    errors: PeerErrors | None = None
    """How the pool's models' mistakes go together (measured in training); without it a candidate's chance
    of being right is its record whatever the others did, and two wrong answers coincide `COINCIDENCE` of
    the time."""
    discrimination: float = 0.0
    """The scorer's `discrimination` s."""

    def __post_init__(self) -> None:
        if not self.answer_value_usd > 0:
            raise ValueError(f"answer_value_usd must be > 0, got {self.answer_value_usd}")
        if self.k_max < 1:
            raise ValueError(f"k_max must be >= 1, got {self.k_max}")
        if not 0.0 <= self.discrimination <= 1.0:
            raise ValueError(f"discrimination must be in [0, 1], got {self.discrimination}")

    def slate_size(self, k: int) -> int:
        return max(self.k_max, self.slate)

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Reliability | None = None) -> list[int]:
        fitting = _fitting(candidates)
        if len(fitting) < 2:
            return fitting[:1]
        plan = self.plan(candidates, known_records(candidates, reliability))
        allowed = np.zeros(len(candidates), dtype=bool)
        allowed[fitting] = True
        if self.k_max < 2:  # nothing can follow the first answer
            allowed[:] = False
        worth = {i: plan.first(i, allowed) for i in fitting}
        return [max(fitting, key=lambda i: (worth[i], -i))]

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Reliability | None = None) -> list[int]:
        if len(asked) >= self.k_max:
            return []
        valued = [a for a in asked if a.value is not None and a.score is not None]
        best = max(valued, key=lambda a: a.score or 0.0, default=None)
        p = min(max(best.score or 0.0, 0.0), 1.0) if best is not None else 0.0
        if p >= 1.0:
            return []
        plan = self.plan(candidates, known_records(candidates, reliability))
        allowed = np.zeros(len(candidates), dtype=bool)
        allowed[_fitting(candidates)] = True
        settled = settled_models(candidates, asked)
        allowed &= np.array([model_of(c) not in settled for c in candidates], dtype=bool)
        allowed[[a.index for a in asked]] = False
        if not allowed.any():
            return []
        kept = best.index if best is not None else asked[0].index if asked else 0
        # A call that gave no answer tells nothing of where the others are right.
        wrong = np.min([plan.given_wrong[a.index] for a in valued], axis=0) if valued else plan.right
        worth = plan.ask(p, wrong, kept, allowed, depth=2 if self.k_max - len(asked) > 1 else 1)
        chosen = int(np.nanargmax(worth))
        return [chosen] if worth[chosen] > p + 1e-12 else []

    def keep(self, asked: Sequence[Asked]) -> int | None:
        return None

    def plan(self, candidates: Sequence[Candidate], known: Sequence[float]) -> _Plan:
        """The tables planning reads for these candidates (`_Plan`)."""
        right = np.clip(np.asarray(known, dtype=float), 0.0, 1.0)
        free = math.isinf(self.answer_value_usd)
        price = np.array([0.0 if free else expected_price(c) / self.answer_value_usd for c in candidates])
        names = [c.agent.model.model_name for c in candidates]
        given_wrong = np.tile(right, (len(candidates), 1))
        coincide = np.full_like(given_wrong, COINCIDENCE)
        if self.errors is not None:
            for i, first in enumerate(names):
                for j, then in enumerate(names):
                    given_wrong[i, j] = self.errors.right_given_wrong(first, then, right[j])
                    coincide[i, j] = self.errors.coincidence(first, then)
        models = [model_of(c) for c in candidates]
        same_model = np.array([[a == b for b in models] for a in models], dtype=bool)
        return _Plan(right, price, given_wrong, coincide, same_model, self.discrimination)
