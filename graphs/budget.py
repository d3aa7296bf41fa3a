"""Budgets (tokens, USD, wall time), checked before every agent call: per question, and per run.

Spending is only known after a call returns, so the check before a call refuses it when the budget is
already spent or when the call's input alone (estimated from the prompt) would overrun what is left.

A run of many questions (`reso eval`) has one run-level `Budget` that every question's budget consults
as its `parent`: a call is refused when either is spent, and what a call spends counts against both, so
reaching the run's limit also stops the calls of questions already in flight. Questions run concurrently,
so calls already under way when the limit is reached still finish: the overshoot is at most what those
calls spend. The run budget is part of the run context (`reso.graphs.context.RunContext.budget`); a
refusal says which budget refused (`Refusal.kind`), so the runner knows a question the run cut short.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from reso.agents.adapters.failures import FailureKind
from reso.agents.profiles import Agent, AgentKind

# A rough characters-per-token ratio for English prompts, used only to estimate a call's input cost
# before it is made; the real counts come back with the answer.
CHARS_PER_TOKEN = 4
RUN_SCOPE = "run"


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a call may not be made: the reason, for people, and which budget refused it, for code."""

    reason: str
    kind: FailureKind


@dataclass
class Budget:
    """Limits and what has been spent so far. `None` means unlimited.

    `scope` names the budget in refusal reasons ("" for a question's, "run" for a whole run's);
    `parent` is a budget this one also answers to (the run's, for a question).
    """

    max_tokens: int | None = None
    max_usd: float | None = None
    max_seconds: float | None = None
    tokens: int = 0
    usd: float = 0.0
    started: float = field(default_factory=time.monotonic)
    exceeded: str | None = None
    scope: str = ""
    parent: Budget | None = None

    def refusal(self, agent: Agent, prompt: str) -> Refusal | None:
        """Why a call of `agent` on `prompt` may not be made now, or None when it may."""
        # Exact tools read the prompt without spending tokens.
        estimated_in = 0 if agent.kind == AgentKind.TOOL else len(prompt) // CHARS_PER_TOKEN
        reason = self.exhausted(extra_tokens=estimated_in, extra_usd=agent.cost_usd(estimated_in, 0))
        if reason is not None:
            kind = FailureKind.RUN_BUDGET_EXCEEDED if self.scope == RUN_SCOPE else FailureKind.BUDGET_EXCEEDED
            return Refusal(self._exceed(reason), kind)
        refusal = self.parent.refusal(agent, prompt) if self.parent is not None else None
        if refusal is not None:
            self._exceed(refusal.reason)
        return refusal

    def exhausted(self, *, extra_tokens: int = 0, extra_usd: float = 0.0) -> str | None:
        """Why this budget cannot take `extra_tokens` / `extra_usd` more (nothing more by default: is it
        already spent?), or None. Does not consult the parent nor mark the budget exceeded."""
        name = f"{self.scope} " if self.scope else ""
        if self.max_seconds is not None and time.monotonic() - self.started >= self.max_seconds:
            return f"{name}wall-time budget of {self.max_seconds:g}s spent"
        if self.max_tokens is not None and (
                self.tokens + extra_tokens > self.max_tokens or self.tokens >= self.max_tokens):
            return f"{name}token budget of {self.max_tokens} spent ({self.tokens} used)"
        if self.max_usd is not None and (self.usd + extra_usd > self.max_usd or self.usd >= self.max_usd):
            return f"{name}USD budget of {self.max_usd:g} spent ({self.usd:.4f} used)"
        return None

    def spend(self, tokens: int, usd: float) -> None:
        self.tokens += tokens
        self.usd += usd
        if self.parent is not None:
            self.parent.spend(tokens, usd)

    def stop(self) -> str | None:
        """Mark this budget exceeded if it is spent; returns the reason (None while it is not)."""
        reason = self.exhausted()
        return self._exceed(reason) if reason is not None else None

    def _exceed(self, reason: str) -> str:
        self.exceeded = self.exceeded or reason
        return reason
