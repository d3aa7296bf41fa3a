"""Deferred DADB learning: collect a run's reward updates instead of writing them, to apply them once.

Applying an update twice (or losing one) when a run is killed and resumed skews the agents' statistics.
Runs that must be exact wrap the team's selector in `DeferredSelector`: inside `collecting()` its
`update` appends to the collection of the current asyncio context (so concurrent questions never mix),
and the caller later applies the batch with `DADB.record_batch` under an idempotency key. Outside any
collection it writes immediately, as the wrapped selector does.

`result_updates` rebuilds a finished question's updates from its step records (every candidate with a
reward), which is how a checkpointed run learns once even when its subtasks ran in two processes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from reso.agents.dadb import Update
from reso.agents.dadb_base import AgentDatabase
from reso.graphs.records import StepRecord
from reso.graphs.scoped import scoped

_SINK: ContextVar[list[Update] | None] = ContextVar("reso_update_sink", default=None)


class DeferredSelector:
    """A selector whose `update` goes to the current collection (immediate when none is open).

    Everything else (`select`, `dadb`, `config`…) is the wrapped selector's.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        # The inner bound method itself, so callers that inspect its signature (for `exclude`) see it.
        self.select = inner.select

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        sink = _SINK.get()
        if sink is None:
            self.inner.update(agent_id, reward, cost_usd, tokens, domain=domain)
            return
        sink.append((agent_id, float(reward), float(cost_usd), int(tokens), domain))


def learning_dadb(selector: Any) -> AgentDatabase | None:
    """The DADB `selector` learns into, or None when its updates write nothing (frozen, or no DADB)."""
    dadb = getattr(selector, "dadb", None)
    return dadb if isinstance(dadb, AgentDatabase) and dadb.mode == "train" else None


@contextlib.contextmanager
def collecting() -> Iterator[list[Update]]:
    """Collect the updates of the work done in this context (and the tasks it starts) into the yielded list."""
    with scoped(_SINK, []) as updates:
        yield updates


def result_updates(steps: Iterable[StepRecord]) -> list[Update]:
    """The DADB updates a finished question's records stand for: every candidate that earned a reward."""
    return [(c.agent_id, c.reward, c.cost_usd, c.input_tokens + c.output_tokens, c.domain)
            for step in steps for c in step.candidates if c.reward is not None]
