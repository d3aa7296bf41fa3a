"""The coarse stage's settings: `SelectorConfig` (weights, sizes, the score variant and the value of a right
answer that prices every candidate) and the variants' names.

It sits below both the score (`scoring.py`) and the selector (`selector.py`), which read it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

__all__ = ["SelectorConfig", "Variant", "check_answer_value"]


class Variant(StrEnum):
    """The coarse stage's score formula (the setting `score_variant`, `SelectorConfig.variant`)."""

    THOMPSON = "thompson"
    KL_UCB = "kl-ucb"
    MOSS = "moss"
    NORMALIZED = "normalized"
    PAPER = "paper"


# Default exploration constant per variant (see `exploration_c`).
_DEFAULT_C: dict[Variant, float] = {Variant.THOMPSON: 0.3, Variant.KL_UCB: 1.0, Variant.MOSS: 0.2,
                                    Variant.NORMALIZED: 0.1, Variant.PAPER: 0.3}


_Kind = TypeVar("_Kind", bound=StrEnum)


def _member(kind: type[_Kind], value: str, name: str) -> _Kind:
    """`value` as a member of `kind`, or an error naming the field `name` and the choices."""
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"{name} must be one of {', '.join(kind)}, got {value!r}") from None


def _doc(text: str) -> dict[str, str]:
    return {"description": text}


def check_answer_value(value: float, name: str = "answer_value_usd") -> float:
    """`value` as the USD a right answer is worth: positive, or infinite (cost counts for nothing).

    Raises:
        ValueError: Naming the field `name` and the value, for zero, a negative value or NaN.
    """
    value = float(value)
    if not value > 0:  # NaN fails this too
        raise ValueError(f"{name} must be a USD amount > 0 (inf: cost counts for nothing), got {value}")
    return value


@dataclass(kw_only=True)
class SelectorConfig:
    """Weights and sizes of the coarse stage (see `reso.agents.selection.scoring` for the formula)."""

    top_m: int = field(default=16, metadata=_doc("Agents retrieved by profile similarity before the bandit score."))
    k: int = field(default=2, metadata=_doc("Candidates returned per subtask (the fine stage runs them)."))
    w_sim: float = field(default=0.6, metadata=_doc("Weight of the cosine similarity (S_sim = w_sim * cos)."))
    w_rep: float = field(default=2.0, metadata=_doc(
        "Weight of the success estimate (S_rep = w_rep * R; R the smoothed or posterior mean)."))
    answer_value_usd: float = field(default=math.inf, metadata=_doc(
        "What a right answer is worth, in USD: the cost penalty is w_rep * expected cost per call / this, so "
        "the score ranks candidates by w_rep * (chance right - cost / value), whoever else is a candidate "
        "(every variant but 'paper'); inf: cost counts for nothing (a training run learning every record)."))
    exploration_c: float | None = field(default=None, metadata=_doc(
        "Exploration constant c; 0 exploits (greedy on the smoothed or posterior mean, deterministic). "
        "'thompson': sharpening of the posterior the draw comes from, about c times its spread (default 0.3; "
        "1 is plain Thompson sampling); 'kl-ucb': multiplier of ln N in the KL budget (default 1); "
        "'moss': multiplier of the MOSS bonus (default 0.2); "
        "'paper': 0.3 (the release's value); "
        "'normalized': 0.1 (0.3 over-explores 63 agents within 2,000 subtasks: see `reso bench routing`)."))
    distinct_models: bool = field(default=True, metadata=_doc(
        "Prefer candidates on different base models: two roles of one model tend to give the same answer, "
        "which leaves the CRM nothing to choose between. Same-model agents fill in when too few models remain."))
    gate_slope: float = field(default=10.0, metadata=_doc("Slope of the similarity gate sigmoid."))
    gate_threshold: float = field(default=0.4, metadata=_doc("S_sim at which the similarity gate is 0.5."))
    variant: Variant = field(default=Variant.THOMPSON, metadata=_doc(
        "'thompson' (default): Thompson sampling on Beta posteriors; 'kl-ucb': the KL upper confidence bound; "
        "'moss': the anytime MOSS index; 'normalized': the smoothed mean with a UCB bonus; all four price a "
        "candidate against answer_value_usd; "
        "'paper': the release's UCB with ln(1 + mean cost). Chosen by `reso bench routing --spreads`."))
    seed: int | None = field(default=None, metadata=_doc("Seed of the tie-breaking jitter and Thompson draws."))
    per_domain: bool | None = field(default=None, metadata=_doc(
        "Default: on for every variant but 'paper' (the release keeps one row per agent). "
        "Score with (agent, domain) statistics. A subtask without a domain label takes the domain of its most "
        "similar agent profile, so a tool agent's record on calculations does not vouch for it on word "
        "problems; updates go to the same (agent, domain) row (and to the agent's overall row)."))
    whole_profiles: bool = field(default=True, metadata=_doc(
        "Retrieve every agent that shares a profile vector with a top-M hit (`ProfileGroups`), so agents "
        "that tie are never cut by their order in the pool; False: the plain top M (kept for comparison)."))
    role_weight: float | None = field(default=None, metadata=_doc(
        "Weight of the agent's model's record in its other roles, pooled into its own "
        "(`reso.agents.selection.pooled_stats`): 1 shares everything, 0 nothing. Default: 1 for every variant "
        "but 'paper' (0: the release learns each agent apart)."))
    domain_prior: float | None = field(default=None, metadata=_doc(
        "At most this many pseudo-visits from the model's record in other domains seed its record in a "
        "domain. Default: 2 for every variant but 'paper' (0)."))
    prior_input_tokens: int = field(default=1000, metadata=_doc(
        "Input tokens of the pseudo-call at list price that seeds each agent's expected cost."))
    prior_output_tokens: int = field(default=500, metadata=_doc("Output tokens of that pseudo-call."))

    def __post_init__(self) -> None:
        self.variant = _member(Variant, self.variant, "variant")
        self.answer_value_usd = check_answer_value(self.answer_value_usd)
        if self.exploration_c is None:
            self.exploration_c = _DEFAULT_C[self.variant]
        if self.per_domain is None:
            self.per_domain = self.variant != Variant.PAPER
        if self.role_weight is None:
            self.role_weight = 0.0 if self.variant == Variant.PAPER else 1.0
        if self.domain_prior is None:
            self.domain_prior = 0.0 if self.variant == Variant.PAPER else 2.0
        if not 0 <= self.role_weight <= 1:
            raise ValueError(f"role_weight must be in [0, 1], got {self.role_weight}")
        if self.top_m < 1 or self.k < 1:
            raise ValueError(f"top_m and k must be >= 1, got top_m={self.top_m}, k={self.k}")
        for name in ("exploration_c", "prior_input_tokens", "prior_output_tokens", "domain_prior"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
