"""The `reward` section of the run settings: which CRM judges the candidates' answers (`reso.reward.registry`)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RewardSettings"]


@dataclass(kw_only=True, frozen=True)
class RewardSettings:
    """The CRM a run judges answers with."""

    scorer: str = field(default="consensus", metadata={"cli": True, "description": (
        "CRM scorer spec: consensus | rule | reliability[:q] | judge:MODEL | calibrated:DIR | peer:DIR | "
        "signals:DIR | staged:DIR | blend:FILE | … (reso.reward.registry).")})
    sees_reference: bool = field(default=False, metadata={"description": (
        "Hand the ground truth to the scorer (the oracle baseline and training only; never a ReSo test run).")})

    def __post_init__(self) -> None:
        if not self.scorer.strip():
            raise ValueError("reward.scorer names a scorer (e.g. consensus); it is empty")
