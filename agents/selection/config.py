"""The coarse stage's settings: `SelectorConfig`, the `selection` section of the run settings
(`reso.graphs.settings.ReSoSettings`): the policy, the score variant, its weights and sizes.

It sits below both the score (`scoring.py`) and the selector (`selector.py`), which read it. How many candidates
a subtask gets is the fine stage's to say (`asking.k`, passed to `select`), and the value of a right answer that
prices every candidate is the run's budget knob (`ReSoSettings.answer_value_usd`, passed to the selector): neither
is declared here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

__all__ = ["SelectorConfig", "Variant", "check_answer_value"]


class Variant(StrEnum):
    """The coarse stage's score formula (the setting `selection.variant`)."""

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


@dataclass(kw_only=True, frozen=True)
class SelectorConfig:
    """Policy, weights and sizes of the coarse stage (see `reso.agents.selection.scoring` for the formula).

    The constants left None resolve to the variant's own when the config is built; `replaced` changes a config
    as `dataclasses.replace` does, except that those constants resolve again for the new variant.
    """

    policy: str = field(default="reputation", metadata=_doc(
        "How candidates are chosen: reputation (ReSo's bandit score over the profile index, `variant`) or random "
        "(the paper's ablation); a registered policy's name (`reso.agents.selection.policies`; the run settings "
        "refuse one that is not registered)."))
    variant: Variant = field(default=Variant.THOMPSON, metadata=_doc(
        "'thompson' (default): Thompson sampling on Beta posteriors; 'kl-ucb': the KL upper confidence bound; "
        "'moss': the anytime MOSS index; 'normalized': the smoothed mean with a UCB bonus; all four price a "
        "candidate against the value of a right answer; "
        "'paper': the release's UCB with ln(1 + mean cost). Chosen by `reso bench routing --spreads`."))
    top_m: int = field(default=16, metadata=_doc("Agents retrieved by profile similarity before the bandit score."))
    embedder: str = field(default="minilm", metadata=_doc(
        "Embedder of profiles and subtasks: minilm | hash:DIM | openai:MODEL (`reso.agents.selection.embeddings`)."))
    explore_when_frozen: bool = field(default=False, metadata=_doc(
        "Keep the exploration bonus in a test run (a frozen DADB learns nothing from exploring, so by default a "
        "test run exploits what was learned: exploration_c 0)."))
    w_sim: float = field(default=0.6, metadata=_doc("Weight of the cosine similarity (S_sim = w_sim * cos)."))
    w_rep: float = field(default=2.0, metadata=_doc(
        "Weight of the success estimate (S_rep = w_rep * R; R the smoothed or posterior mean)."))
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
    defaulted: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    """The variant-dependent constants that were left None and resolved to the variant's."""

    def __post_init__(self) -> None:
        variant = _member(Variant, self.variant, "selection.variant")
        paper = variant == Variant.PAPER
        object.__setattr__(self, "variant", variant)  # frozen: the text becomes its member once, here
        resolved = {
            "exploration_c": _DEFAULT_C[variant] if self.exploration_c is None else self.exploration_c,
            "per_domain": not paper if self.per_domain is None else self.per_domain,
            "role_weight": (0.0 if paper else 1.0) if self.role_weight is None else self.role_weight,
            "domain_prior": (0.0 if paper else 2.0) if self.domain_prior is None else self.domain_prior,
        }
        object.__setattr__(self, "defaulted", frozenset(name for name in resolved if getattr(self, name) is None))
        for name, value in resolved.items():
            object.__setattr__(self, name, value)  # frozen: the resolved constants are set once, here
        if not 0 <= (self.role_weight or 0.0) <= 1:
            raise ValueError(f"selection.role_weight must be in [0, 1], got {self.role_weight}")
        if self.top_m < 1:
            raise ValueError(f"selection.top_m must be >= 1, got {self.top_m}")
        for name in ("exploration_c", "prior_input_tokens", "prior_output_tokens", "domain_prior"):
            if getattr(self, name) < 0:
                raise ValueError(f"selection.{name} must be >= 0, got {getattr(self, name)}")

    def replaced(self, **changes: Any) -> SelectorConfig:
        """This config with `changes`; the constants it had resolved resolve again (for a new variant)."""
        return replace(self, **{**dict.fromkeys(self.defaulted), **changes})

    def exploiting(self) -> SelectorConfig:
        """This config without exploration (exploration_c 0): what a test run scores with unless
        `explore_when_frozen`."""
        return self if self.explore_when_frozen else replace(self, exploration_c=0.0)
