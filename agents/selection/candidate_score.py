"""What the coarse stage hands the fine stage about one candidate: its scored terms, typed.

`reso.agents.selection.scoring.score_components` scores the M retrieved candidates at once, as arrays; the
selector turns the k it returns into one `CandidateScore` each (`CandidateScore.of`). The fine stage reads the
named fields and two derived quantities, so it never re-derives a term from the score's formula:

- `price_in_record_points`: the cost penalty in points of the model's record (penalty / w_rep: the score
  weighs w_rep × record against the penalty), for the asking policy that nets records of their price;
- `record`: the training record the score read (pooled reward sum and visits), for the policies that ask by
  how often a model was right.

A candidate chosen by a rule rather than scored (a pinned baseline, the integration step's exact tool, the
random-selection ablation's draw) carries a `RuleChoice` instead, and no `CandidateScore`.

Both write the run record's `selection` dict (`reso.graphs.run_records`, results.jsonl) with `as_record`: the same
keys, in the same order, as the coarse stage's dict of components did before these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from reso.agents.selection.scoring import BAYES_COMPONENTS

__all__ = ["RECORD_FIELDS", "CandidateScore", "Rule", "RuleChoice"]

RECORD_FIELDS = (*BAYES_COMPONENTS, "pooled_visits")
"""The scored terms the run record holds, in its order; a variant's terms that are None are left out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateScore:
    """Every term of one candidate's coarse-stage score (`reso.agents.selection.scoring` for the formulas).

    Fields from `similarity` to `mean_cost` come with every variant; `posterior_mean` and `belief` with the
    Bayesian ones (`thompson`, `kl-ucb`, `moss`) only. `visits` is the agent's own record in the domain,
    `pooled_visits` the record the score read (its model's, pooled across roles and domains). `w_rep` and
    `reward_sum` are the inputs the derived quantities need; they are not recorded.
    """

    similarity: float
    s_sim: float
    reputation: float
    s_rep: float
    cost_penalty: float
    base: float
    exploration: float
    gate: float
    score: float
    visits: float
    mean_cost: float
    posterior_mean: float | None = None
    belief: float | None = None
    pooled_visits: float
    w_rep: float
    """The reputation weight the score was computed with (`SelectorConfig.w_rep`)."""
    reward_sum: float
    """The sum of rewards of the record the score read (pooled, as `pooled_visits`)."""

    @classmethod
    def of(cls, parts: Mapping[str, np.ndarray], i: int, *, w_rep: float, reward_sum: float) -> CandidateScore:
        """Candidate i's terms from `score_components`' arrays (with `pooled_visits` added by the selector).

        A name the arrays hold that is not a field raises TypeError: a new term must be given a field."""
        terms = {name: float(values[i]) for name, values in parts.items()}
        return cls(**terms, w_rep=w_rep, reward_sum=reward_sum)

    @property
    def price_in_record_points(self) -> float:
        """The cost penalty in points of the model's record: the score weighs `w_rep * record` against the
        penalty, so a penalty p costs p / w_rep of a record (0 without a reputation weight)."""
        return self.cost_penalty / self.w_rep if self.w_rep > 0.0 else 0.0

    @property
    def record(self) -> tuple[float, float]:
        """The training record the score read: (sum of rewards, visits), pooled as the score pooled them."""
        return self.reward_sum, self.pooled_visits

    def as_record(self) -> dict[str, float]:
        """The run record's `selection` dict: `RECORD_FIELDS` in order, those that are None left out."""
        values = ((name, getattr(self, name)) for name in RECORD_FIELDS)
        return {name: float(value) for name, value in values if value is not None}


class Rule(StrEnum):
    """Why a candidate was chosen without a coarse-stage score; the value is the run record's key."""

    PINNED = "pinned"
    """A baseline's fixed agent (`reso.evals.methods.PinnedSelector`)."""
    INTEGRATION_ROUTE = "integration_route"
    """The pool's exact tool, for an integration step (the setting `integration="tool"`)."""
    RANDOM_RANK = "random_rank"
    """The random-selection ablation's draw (`RandomSelector`); the value is the candidate's rank in it."""


@dataclass(frozen=True, slots=True)
class RuleChoice:
    """A candidate chosen by a rule: which rule, and the number the run record keeps for it (1 for a rule
    with nothing to say but that it chose; a random draw's rank)."""

    rule: Rule
    value: float = 1.0

    def as_record(self) -> dict[str, float]:
        """The run record's `selection` dict: `{rule: value}`."""
        return {self.rule.value: float(self.value)}
