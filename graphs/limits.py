"""The `limits` section of the run settings: what one question and one agent call may spend. It imports nothing
heavy, so the command line can build its options from it; the budgets it makes are `reso.graphs.budget`'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reso.graphs.budget import Budget

__all__ = ["QuestionLimits"]


@dataclass(kw_only=True, frozen=True)
class QuestionLimits:
    """The `limits` section of the run settings: what one question and one agent call may spend (None: no limit).

    They decide whether an item's answer is cut short, so they change answers (unlike a run's budget,
    `reso.evals.eval_config.RunOptions`, which only decides how many items run)."""

    max_tokens: int | None = field(default=None, metadata={"description": "Token budget per question."})
    max_usd: float | None = field(default=None, metadata={"description": "USD budget per question."})
    max_seconds: float | None = field(default=None, metadata={"description": "Wall-time budget per question (s)."})
    call_timeout_s: float = field(default=120.0, metadata={"description": "Time limit of one agent call (s)."})

    def __post_init__(self) -> None:
        for name in ("max_tokens", "max_usd", "max_seconds"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"limits.{name} must be >= 0 (none: no limit), got {value}")
        if not self.call_timeout_s > 0:
            raise ValueError(f"limits.call_timeout_s must be > 0, got {self.call_timeout_s}")

    def question_budget(self, parent: Budget | None = None) -> Budget:
        """A fresh budget for one question, answering to `parent` (the run's)."""
        from reso.graphs.budget import Budget

        return Budget(max_tokens=self.max_tokens, max_usd=self.max_usd, max_seconds=self.max_seconds,
                      parent=parent)
