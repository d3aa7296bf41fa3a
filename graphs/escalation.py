"""How many of a subtask's candidates answer, and in what order: the fine stage's asking policy.

The paper asks a fixed k candidates at once. An asking policy may instead ask in stages: a first group
answers, the answers are scored, and the policy decides from the scores whether to ask more
(`AskingRule` names them; `policy_for` builds the one the settings ask for):

- `PricedAsking` (the default, `reso.graphs.priced_asking`): one more candidate answers while its expected gain
  in being right, at the value of a right answer, exceeds its expected price.
- `FixedK`: the paper's fine stage; the first k candidates answer at once.
- `Adaptive` (the confidence rule, the main job's fine stage before the budget knob): the first candidate
  answers with those of the next k - 1 whose model's training record
  is within `peer_margin` of its own; then, while the best calibrated CRM score so far is below
  `confidence`, one more candidate of a model not yet asked answers, among those more likely right than the
  best answer so far (by their model's training record, smoothed with a prior of one half): by default the
  first of them in the coarse stage's cost-aware order (`escalate_to="ranked"`: with dozens of models, the
  most reliable one is often a far dearer sibling of the one that just answered), or the most reliable one
  (`"reliable"`, the earlier rule); or, among peers (`"diverse"`), a model whose mistakes go least with those
  of the models already asked, among the remaining models whose record is within `peer_margin` of the best
  remaining one, whether or not it is more likely right than the answer so far: an independent peer's
  agreement is the evidence the peer posterior (`reso.reward.peer_posterior`) weighs. `"diverse-priced"` does
  the same with each record net of its price (the coarse stage's cost penalty, in record points), so a dear
  peer must be that much more reliable to be asked (when this rule was the main job's, on its validation
  composites it cost up to 54 % less and lost 8 of 450 composites net, so `"diverse"` stayed price-blind). At most
  `escalations` times and while fewer than `k_max` have answered. An easy subtask is settled by the
  cheap agents the cost-aware coarse stage put first; a hard one reaches the strong, expensive agent; a
  strong first agent is not joined by a much weaker one, which would rarely overturn it and costs.
- `Cascade`: the baseline "ask two cheap models, keep their answer when they agree, else ask a third".

A policy sees candidates in the coarse stage's order and the answers' final values and scores; it never
sees ground truth.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reso.agents.selection.selector import Candidate
from reso.graphs.asking import Asked, AskingPolicy, Reliability, known_records, model_of, settled_models
from reso.graphs.asking_config import DEFAULT_K_MAX, PEER_MARGIN, AskingConfig, AskingRule, EscalateTo
from reso.graphs.priced_asking import PricedAsking
from reso.reward.answers import answers_match
from reso.reward.peer_errors import PeerErrors

__all__ = ["PEER_MARGIN", "Adaptive", "Asked", "AskingConfig", "AskingPolicy", "AskingRule", "Cascade", "EscalateTo",
           "FixedK", "PricedAsking", "policy_for"]


@dataclass(frozen=True)
class FixedK:
    """The paper's fine stage: k candidates answer at once, the best-scored answer is kept."""

    def slate_size(self, k: int) -> int:
        return k

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Reliability | None = None) -> list[int]:
        return list(range(min(k, len(candidates))))

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Reliability | None = None) -> list[int]:
        return []

    def keep(self, asked: Sequence[Asked]) -> int | None:
        return None


def _price_in_record_points(candidate: Candidate) -> float:
    """The candidate's cost penalty in the coarse stage, in points of its model's record
    (`CandidateScore.price_in_record_points`); 0 for a candidate the coarse stage did not score (a pinned
    baseline's, the exact tool's, a random draw)."""
    return candidate.terms.price_in_record_points if candidate.terms is not None else 0.0


@dataclass(frozen=True)
class Adaptive:
    """Ask the first candidate with its near peers among the first k, then one more at a time while the
    best score is below `confidence`, at most `escalations` times and up to `k_max` answers.

    Escalation goes to a candidate of a model not asked yet that is more likely right than the best answer
    so far: the first such in the coarse stage's order, which weighs record against price (`"ranked"`), or
    the most reliable (`"reliable"`, ties in the coarse stage's order), so a hard subtask ends with the
    agent the DADB trusts most, whatever its price. Among peers (`"diverse"`), it goes to the model whose
    mistakes go least with those already asked, among those within `peer_margin` of the best remaining
    record (net of price for `"diverse-priced"`), whether or not it is more likely right than the best
    answer so far.
    """

    confidence: float
    k_max: int
    slate: int = 16
    """How many candidates the coarse stage offers: escalation chooses among them, so it can reach a strong
    agent that the cost-aware ranking put far down."""
    peer_margin: float = PEER_MARGIN
    """A first-stage candidate whose model's record is more than this below the first candidate's does not
    answer (1 or more: all of the first k answer, the paper's way)."""
    escalations: int | None = None
    """The most candidates asked after the first stage (None: only `k_max` limits them). `policy_for` sets
    it to k_max - k, so a first stage trimmed to its peers does not hand its unused places to escalation."""
    escalate_to: EscalateTo = EscalateTo.RANKED
    """Which candidate an escalation asks (see the class docstring)."""
    errors: PeerErrors | None = None
    """How the pool's models' mistakes go together (measured in training), for `"diverse"` and
    `"diverse-priced"`; without it every pair counts as equally correlated, and the coarse stage's order
    decides. (`"diverse-priced"` reads each candidate's cost penalty from the coarse stage: candidates of the
    random selection policy carry none, and it then chooses as `"diverse"`.)"""

    def __post_init__(self) -> None:
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be in [0, 1], got {self.confidence}")
        if self.k_max < 1:
            raise ValueError(f"k_max must be >= 1, got {self.k_max}")
        if self.peer_margin < 0:
            raise ValueError(f"peer_margin must be >= 0, got {self.peer_margin}")
        if self.escalate_to not in set(EscalateTo):
            raise ValueError(f"escalate_to must be one of {', '.join(EscalateTo)}, got {self.escalate_to!r}")

    def slate_size(self, k: int) -> int:
        return max(k, self.k_max, self.slate)

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Reliability | None = None) -> list[int]:
        head = list(range(min(k, len(candidates))))
        if len(head) < 2 or self.peer_margin >= 1.0:
            return head
        known = known_records(candidates, reliability)
        return [0] + [i for i in head[1:] if known[i] >= known[0] - self.peer_margin]

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Reliability | None = None) -> list[int]:
        if len(asked) >= self.k_max:
            return []
        if self.escalations is not None and max((a.round for a in asked), default=0) >= self.escalations:
            return []
        best = max((a.score for a in asked if a.value is not None and a.score is not None), default=None)
        if best is not None and best >= self.confidence:
            return []
        done = {a.index for a in asked}
        models = settled_models(candidates, asked)
        rest = [i for i in range(len(candidates)) if i not in done and model_of(candidates[i]) not in models]
        if not rest:
            return []
        known = known_records(candidates, reliability)
        if self.escalate_to in (EscalateTo.DIVERSE, EscalateTo.DIVERSE_PRICED):
            return [self._least_correlated(candidates, asked, rest, known)]
        # An agent less likely to be right than the best answer so far adds cost, not confidence.
        able = [i for i in rest if best is None or known[i] > best]
        if not able:
            return []
        return [able[0] if self.escalate_to == EscalateTo.RANKED else max(able, key=lambda i: (known[i], -i))]

    def _least_correlated(self, candidates: Sequence[Candidate], asked: Sequence[Asked], rest: Sequence[int],
                          known: Sequence[float]) -> int:
        """The peer to ask next for `"diverse"`: among the remaining models within `peer_margin` of the best
        remaining record (net of price for `"diverse-priced"`), the one whose mistakes go least with the asked
        models' (to a tenth: closer than that the measurement cannot tell them apart), then the first in the
        coarse stage's order."""
        priced = self.escalate_to == EscalateTo.DIVERSE_PRICED
        net = {i: known[i] - (_price_in_record_points(candidates[i]) if priced else 0.0) for i in rest}
        top = max(net.values())
        peers = [i for i in rest if net[i] >= top - self.peer_margin]
        if self.errors is None:
            return peers[0]
        asked_models = [candidates[a.index].agent.model.model_name for a in asked]
        errors = self.errors

        def correlation(i: int) -> float:
            return round(errors.most_correlated(candidates[i].agent.model.model_name, asked_models), 1)

        return min(peers, key=lambda i: (correlation(i), i))

    def keep(self, asked: Sequence[Asked]) -> int | None:
        return None


@dataclass(frozen=True)
class Cascade:
    """The cascade baseline: the first `cheap` candidates answer; when their final values all agree, that
    answer is kept; otherwise the remaining candidate answers and its answer is kept (when it fails, the
    first cheap answer with a value is kept)."""

    cheap: int = 2
    same: Callable[[str, str], bool] = answers_match

    def slate_size(self, k: int) -> int:
        return self.cheap + 1

    def first(self, candidates: Sequence[Candidate], k: int, reliability: Reliability | None = None) -> list[int]:
        return list(range(min(self.cheap, len(candidates))))

    def more(self, candidates: Sequence[Candidate], asked: Sequence[Asked],
             reliability: Reliability | None = None) -> list[int]:
        if len(asked) > self.cheap or len(candidates) <= self.cheap:
            return []
        values = [a.value for a in asked if a.value is not None]
        if values and len(values) == len(asked) and all(self.same(values[0], v) for v in values[1:]):
            return []
        return [self.cheap]

    def keep(self, asked: Sequence[Asked]) -> int | None:
        strong = [a for a in asked if a.index >= self.cheap and a.value is not None]
        if strong:
            return strong[0].index
        cheap = [a for a in asked if a.value is not None]
        return cheap[0].index if cheap else None


def policy_for(config: AskingConfig, *, errors: PeerErrors | None = None, answer_value_usd: float = math.inf,
               discrimination: float = 0.0) -> AskingPolicy:
    """The policy `config` asks for (`AskingRule`): asking that pays at `answer_value_usd` (at most
    `k_max` answers, `DEFAULT_K_MAX` when None), the confidence threshold (at most k_max - k escalations after a
    first stage of up to k), or the paper's fixed k. `errors`: the pool's pairwise error statistics, which the
    priced rule and a `"diverse"` or `"diverse-priced"` escalation read; `discrimination`: the scorer's, which
    the priced rule plans its first pick by.
    """
    if config.rule == AskingRule.FIXED:
        return FixedK()
    if config.rule == AskingRule.PRICED:
        return PricedAsking(answer_value_usd=answer_value_usd, k_max=config.k_max or DEFAULT_K_MAX, errors=errors,
                            discrimination=discrimination)
    k_max = config.k_max or DEFAULT_K_MAX  # never None here: the config's own check requires it
    return Adaptive(confidence=config.confidence or 0.0, k_max=k_max, peer_margin=config.peer_margin,
                    escalations=max(k_max - config.k, 0), escalate_to=config.escalate_to, errors=errors)
