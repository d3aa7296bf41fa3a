"""Exactly-once DADB learning: a finished question's reward updates applied in one transaction under a key.

Applying an update twice (or losing one) when a run is killed and resumed skews the agents' statistics.
A run that must be exact gives its run context a `LearnOnce` (`RunContext.learn_once`): its subtasks then
record every candidate's reward without writing it, and whoever owns the run applies each finished
question's updates once, rebuilt from the question's records (`result_updates`), with `LearnOnce.apply`
under a key the DADB remembers. Rebuilding from records is what lets a checkpointed run learn once even
when its subtasks ran in two processes. A run without one learns as it goes: each subtask's rewards go to
the selector as the subtask finishes.

The two owners are the Python API (`reso.graphs.api.ReSo`: a checkpointed training run, keyed by
checkpoint file and thread) and the evaluation runner (`reso.evals.runner`: keyed by run and item, with
the results file as the log that `reconcile` replays after a crash; see `reso.evals.ledger`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from reso.agents.dadb.base import AgentDatabase, Mode, Update
from reso.graphs.records import StepRecord
from reso.graphs.settings import ReSoSettings


def learning_dadb(selector: Any) -> AgentDatabase | None:
    """The DADB `selector` learns into, or None when its updates write nothing (frozen, or no DADB)."""
    dadb = getattr(selector, "dadb", None)
    return dadb if isinstance(dadb, AgentDatabase) and dadb.mode == Mode.TRAIN else None


def result_updates(steps: Iterable[StepRecord]) -> list[Update]:
    """The DADB updates a finished question's records stand for: every candidate that earned a reward."""
    return [(c.agent_id, c.reward, c.cost_usd, c.input_tokens + c.output_tokens, c.domain)
            for step in steps for c in step.candidates if c.reward is not None]


@dataclass(frozen=True)
class LearnOnce:
    """Applies keyed batches of DADB updates, each key at most once (across processes: the DADB keeps them)."""

    dadb: AgentDatabase

    @classmethod
    def for_selector(cls, selector: Any, settings: ReSoSettings) -> LearnOnce | None:
        """The service for a training run whose selector learns into a DADB; None when nothing is learned."""
        dadb = learning_dadb(selector) if settings.mode == Mode.TRAIN else None
        return cls(dadb) if dadb is not None else None

    def apply(self, key: str, updates: Iterable[Update]) -> bool:
        """Apply `updates` in one transaction unless `key` was applied before; True when they were."""
        return self.dadb.record_batch(key, updates)

    def reconcile(self, prefix: str, pending: Iterable[tuple[str, list[Update]]]) -> int:
        """Apply every (key, updates) batch whose key (under `prefix`) the DADB lacks; returns how many."""
        applied = self.dadb.applied_keys(prefix=prefix)
        return sum(self.apply(key, updates) for key, updates in pending if key not in applied)
