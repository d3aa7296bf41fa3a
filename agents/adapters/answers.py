"""The record of one agent call: what it answered, what it cost and how long it took."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from reso.agents.adapters.failures import FailureKind


@dataclass(frozen=True, slots=True)
class AgentAnswer:
    """One candidate's answer to one subtask. `error` (a line for people) and `failure` (its kind, for code)
    are set, and `text` is empty, when the call failed; `retries` counts the extra attempts transient
    failures cost."""

    agent_id: str
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    error: str | None = None
    retries: int = 0
    failure: FailureKind | None = None

    def __post_init__(self) -> None:
        if self.error is not None and self.failure is None:  # an error of no known kind is a plain error
            object.__setattr__(self, "failure", FailureKind.ERROR)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
