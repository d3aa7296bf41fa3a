"""Per-question budgets (tokens, USD, wall time), checked before every agent call.

Spending is only known after a call returns, so the check before a call refuses it when the budget is
already spent or when the call's input alone (estimated from the prompt) would overrun what is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from reso.agents.profiles import Agent

# A rough characters-per-token ratio for English prompts, used only to estimate a call's input cost
# before it is made; the real counts come back with the answer.
CHARS_PER_TOKEN = 4


@dataclass
class Budget:
    """Limits for one question and what has been spent so far. `None` means unlimited."""

    max_tokens: int | None = None
    max_usd: float | None = None
    max_seconds: float | None = None
    tokens: int = 0
    usd: float = 0.0
    started: float = field(default_factory=time.monotonic)
    exceeded: str | None = None

    def refusal(self, agent: Agent, prompt: str) -> str | None:
        """Why a call of `agent` on `prompt` may not be made now, or None when it may."""
        estimated_in = len(prompt) // CHARS_PER_TOKEN
        if self.max_seconds is not None and time.monotonic() - self.started >= self.max_seconds:
            return self._exceed(f"wall-time budget of {self.max_seconds:g}s spent")
        if self.max_tokens is not None and self.tokens + estimated_in > self.max_tokens:
            return self._exceed(f"token budget of {self.max_tokens} spent ({self.tokens} used)")
        if self.max_usd is not None and self.usd + agent.cost_usd(estimated_in, 0) > self.max_usd:
            return self._exceed(f"USD budget of {self.max_usd:g} spent ({self.usd:.4f} used)")
        return None

    def spend(self, tokens: int, usd: float) -> None:
        self.tokens += tokens
        self.usd += usd

    def _exceed(self, reason: str) -> str:
        self.exceeded = self.exceeded or reason
        return reason
