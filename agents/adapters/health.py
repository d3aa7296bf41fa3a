"""Agent health: a circuit breaker per endpoint, so that a dead endpoint stops being asked.

The DADB penalises a failing agent only in training mode (a failed call earns reward 0); a frozen DADB
(test mode) would keep selecting it. The breaker works in both modes, in memory, for the life of the
team (a run's, shared by its questions):

- closed: calls flow; `threshold` consecutive failures open it.
- open: its agents are excluded from selection for `cooldown_s` (doubling on each failed probe, up to
  `max_cooldown_s`).
- half-open: after the cool-down, one selection may take one of its agents as a probe (the others stay
  excluded until the probe reports, or for another cool-down if it never does); a success closes the
  breaker, a failure opens it again.

Breakers are kept per endpoint (the model spec and base URL), not per agent: every role played by one
dead model fails alike, and `Health.for_pool` groups them so that one breaker trips for all of them.

What counts: a call that errored (after retries) is a failure, except a decline: a tool refusing a
non-calculation or a replay agent without a recording reached a healthy agent that had nothing to say
and counts as neither. A reply with no extractable answer (empty, garbage) is a failure; one with an
answer is a success; a call the budget refused was never made and counts as nothing
(`FailureKind.neutral`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict

from reso.agents.adapters.answers import AgentAnswer
from reso.agents.profiles import Agent

BreakerState = Literal["closed", "open", "half_open"]
Outcome = Literal["success", "failure", "neutral"]


class BreakerSnapshot(TypedDict):
    """One breaker as `Health.snapshot` reports it."""

    state: BreakerState
    failures: int
    trips: int


def endpoint_key(agent: Agent) -> str:
    """The endpoint an agent's calls go to: its model spec and base URL."""
    return f"{agent.model.spec}@{agent.model.base_url or ''}"


def classify(answer: AgentAnswer, has_answer: Callable[[str], bool]) -> Outcome:
    """Whether a call speaks for or against its endpoint's health (see the module docstring)."""
    if answer.failure is not None:
        return "neutral" if answer.failure.neutral else "failure"
    return "success" if has_answer(answer.text) else "failure"


@dataclass
class _Breaker:
    failures: int = 0
    opened_at: float | None = None
    cooldown_s: float = 0.0
    probe_until: float | None = None
    trips: int = 0


class Health:
    """Circuit breakers for a team's agents; thread-safe (selection runs in worker threads)."""

    def __init__(
        self,
        *,
        threshold: int = 5,
        cooldown_s: float = 30.0,
        max_cooldown_s: float = 600.0,
        groups: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Args:
            threshold: Consecutive failures that open a breaker.
            cooldown_s: First cool-down of an open breaker, in seconds.
            max_cooldown_s: Longest cool-down (it doubles on each failed probe).
            groups: agent id → breaker key (agents sharing a key share a breaker); an agent not listed has
                its own breaker.
            clock: Monotonic time source (tests pass a fake).
        """
        if threshold < 1:
            raise ValueError(f"threshold must be >= 1, got {threshold}")
        if cooldown_s < 0 or max_cooldown_s < cooldown_s:
            raise ValueError(f"need 0 <= cooldown_s <= max_cooldown_s, got {cooldown_s} and {max_cooldown_s}")
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self.max_cooldown_s = max_cooldown_s
        self._groups = dict(groups or {})
        self._clock = clock
        self._lock = threading.Lock()
        self._breakers: dict[str, _Breaker] = {}

    @classmethod
    def for_pool(cls, pool: Iterable[Agent], **options: object) -> Health:
        """Breakers shared by the agents of each endpoint of `pool` (options as for `Health`)."""
        return cls(groups={agent.id: endpoint_key(agent) for agent in pool}, **options)  # type: ignore[arg-type]

    def _key(self, agent_id: str) -> str:
        return self._groups.get(agent_id, agent_id)

    def _members(self, key: str) -> list[str]:
        members = [agent_id for agent_id, group in self._groups.items() if group == key]
        return members or [key]

    def state(self, agent_id: str) -> BreakerState:
        """The breaker state of `agent_id`'s endpoint now."""
        with self._lock:
            return self._state(self._breakers.get(self._key(agent_id)), self._clock())

    @staticmethod
    def _state(breaker: _Breaker | None, now: float) -> BreakerState:
        if breaker is None or breaker.opened_at is None:
            return "closed"
        return "open" if now < breaker.opened_at + breaker.cooldown_s else "half_open"

    def unavailable(self) -> set[str]:
        """Agent ids not to select now. A half-open endpoint is offered to one selection as a probe."""
        now = self._clock()
        banned: set[str] = set()
        with self._lock:
            for key, breaker in self._breakers.items():
                state = self._state(breaker, now)
                if state == "closed":
                    continue
                if state == "half_open" and (breaker.probe_until is None or now >= breaker.probe_until):
                    breaker.probe_until = now + max(breaker.cooldown_s, 1e-9)
                    continue
                banned.update(self._members(key))
        return banned

    def record(self, agent_id: str, ok: bool) -> None:
        """Count one call's outcome for `agent_id`'s endpoint."""
        now = self._clock()
        with self._lock:
            breaker = self._breakers.setdefault(self._key(agent_id), _Breaker())
            if ok:
                breaker.failures, breaker.opened_at, breaker.cooldown_s, breaker.probe_until = 0, None, 0.0, None
                return
            breaker.failures += 1
            state = self._state(breaker, now)
            if state == "open":  # a call that started before the breaker opened
                return
            if state == "half_open":  # the probe failed: open again, for longer
                breaker.cooldown_s = min(self.max_cooldown_s, max(self.cooldown_s, 2 * breaker.cooldown_s))
            elif breaker.failures >= self.threshold:
                breaker.cooldown_s = self.cooldown_s
            else:
                return
            breaker.opened_at, breaker.probe_until = now, None
            breaker.trips += 1

    def report(self, answer: AgentAnswer, has_answer: Callable[[str], bool]) -> Outcome:
        """Classify one finished call (`classify`) and count it; returns the outcome."""
        outcome = classify(answer, has_answer)
        if outcome != "neutral":
            self.record(answer.agent_id, outcome == "success")
        return outcome

    def snapshot(self) -> dict[str, BreakerSnapshot]:
        """Breaker key → {state, consecutive failures, times opened}, for reports."""
        now = self._clock()
        with self._lock:
            return {key: {"state": self._state(b, now), "failures": b.failures, "trips": b.trips}
                    for key, b in self._breakers.items()}
