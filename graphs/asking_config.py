"""The `asking` section of the run settings: how the fine stage asks (`AskingConfig`) and the names its rules and
escalations go by. It imports nothing heavy, so the command line can build its options from it; the policies
themselves are `reso.graphs.escalation`'s (`policy_for`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["DEFAULT_K_MAX", "PEER_MARGIN", "AskingConfig", "AskingRule", "EscalateTo"]

DEFAULT_K_MAX = 4
"""The most answers a subtask gets when the settings name no `k_max`."""

# How far below the first candidate's record a first-stage peer may be and still answer with it. The
# records of the models a subtask offers are either close (comparable peers, whose agreement is evidence)
# or far apart (a strong model among weak ones); in the main job any margin from 0.05 to 0.2 makes the
# same choices on the training composites.
PEER_MARGIN = 0.1


class AskingRule(StrEnum):
    """How the fine stage decides whether to ask one more candidate (the setting `asking.rule`)."""

    PRICED = "priced"
    """Ask while the expected gain in being right, at the value of a right answer, exceeds the candidate's
    price (`PricedAsking`, the default)."""
    CONFIDENCE = "confidence"
    """Ask while the best score is below `confidence` (`Adaptive`: the earlier adaptive and peer stages)."""
    FIXED = "fixed"
    """The paper's: k candidates at once (`FixedK`)."""


class EscalateTo(StrEnum):
    """Which candidate an adaptive escalation asks (see `Adaptive`)."""

    RANKED = "ranked"
    RELIABLE = "reliable"
    DIVERSE = "diverse"
    DIVERSE_PRICED = "diverse-priced"


@dataclass(kw_only=True, frozen=True)
class AskingConfig:
    """The fine stage's settings (the `asking` section): how many candidates answer a subtask, and when one more
    is asked. `policy_for` makes the policy they describe."""

    rule: AskingRule = field(default=AskingRule.PRICED, metadata={"description": (
        "How the fine stage decides whether to ask another candidate: priced (while the expected gain in being "
        "right x the answer's value exceeds its price, up to k_max answers), confidence (while the best score is "
        "below `confidence`, up to k_max), fixed (k at once, the paper's).")})
    k: int = field(default=2, metadata={"description": (
        "Candidates answering each subtask at once (rule fixed; the first stage of rule confidence).")})
    k_max: int | None = field(default=None, metadata={"description": (
        f"At most this many candidates answer a subtask (rule priced: none means {DEFAULT_K_MAX}; rule "
        "confidence: required).")})
    confidence: float | None = field(default=None, metadata={"description": (
        "Rule confidence: ask one more candidate while the best CRM score is below this (with k_max).")})
    peer_margin: float = field(default=PEER_MARGIN, metadata={"description": (
        "Rule confidence: of the first k, a candidate whose model's training record is more than this below "
        "the first candidate's does not answer (1: all k answer).")})
    escalate_to: EscalateTo = field(default=EscalateTo.RANKED, metadata={"description": (
        "Rule confidence: which candidate an escalation asks, among those of models not yet asked that are more "
        "likely right than the best answer so far: ranked, the first in the coarse stage's cost-aware order; "
        "reliable, the one with the best training record whatever its price; diverse (for peers, with the peer "
        "posterior CRM), among models within peer_margin of the best remaining record, the one whose mistakes go "
        "least with those already asked, even if none is more likely right; diverse-priced, the same with each "
        "record net of its price (the coarse stage's cost penalty in record points).")})
    skills: str = field(default="", metadata={"description": (
        "A question-skills folder (reso.agents.selection.question_skills): each model's chance on a subtask read "
        "from its record on the nearest past subtasks, for rule priced; empty: its pooled record.")})

    def __post_init__(self) -> None:
        for name, kind in (("rule", AskingRule), ("escalate_to", EscalateTo)):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, kind(value))  # frozen: the text becomes its member once, here
            except ValueError:
                raise ValueError(f"unknown asking.{name} {value!r}; choose one of {', '.join(kind)}") from None
        if self.k < 1:
            raise ValueError(f"asking.k must be >= 1, got {self.k}")
        if self.confidence is not None and not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"asking.confidence must be in [0, 1], got {self.confidence}")
        if not self.peer_margin >= 0.0:
            raise ValueError(f"asking.peer_margin must be >= 0, got {self.peer_margin}")
        if self.k_max is not None and self.k_max < 1:
            raise ValueError(f"asking.k_max must be >= 1, got {self.k_max}")
        if self.rule == AskingRule.CONFIDENCE and (self.confidence is None or self.k_max is None):
            raise ValueError("asking.rule 'confidence' needs both asking.confidence and asking.k_max")
        if self.confidence is not None and self.rule != AskingRule.CONFIDENCE:
            raise ValueError(f"asking.confidence is read by asking.rule 'confidence' only (the rule is "
                             f"{self.rule.value!r}): set the rule to 'confidence', or leave confidence out")
