"""How a run's rewards reach the DADB: the run's `Learner` decides, and nobody else asks.

Rewards leave a run by one of two routes:

- **as they go**: each subtask sends its candidates' rewards to the selector (`Selector.update`) when it
  finishes. Quick, but a run killed and resumed may apply an update twice or lose one.
- **once**: subtasks only record their rewards, and whoever owns the run applies each finished question's
  updates, rebuilt from the question's records (`result_updates`), in one transaction under a key the DADB
  remembers (`LearnOnce`). Rebuilding from records is what lets a checkpointed run learn once even when its
  subtasks ran in two processes.

A test-mode run learns nothing at all: its subtasks compute no rewards.

The owners of a learn-once run are the Python API (`reso.graphs.api.ReSo`: a checkpointed training run,
keyed by checkpoint file and thread) and the evaluation runner (`reso.evals.runner`: keyed by run and item,
with the results file as the log that `reconcile` replays after a crash; see `reso.evals.ledger`). A Ray
worker (`reso.evals.backends.ray_worker`) has a learn-once learner that it never applies: its subtasks
only record, and the runner's process applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from reso.agents.dadb.base import AgentDatabase, Mode, Update
from reso.agents.selection.selector import Selector
from reso.graphs.run_records import CandidateRecord, StepRecord
from reso.graphs.settings import ReSoSettings

Route = Literal["off", "as_they_go", "once"]


def learning_dadb(selector: Any) -> AgentDatabase | None:
    """The DADB `selector` learns into, or None when its updates write nothing (frozen, or no DADB)."""
    dadb = getattr(selector, "dadb", None)
    return dadb if isinstance(dadb, AgentDatabase) and dadb.mode == Mode.TRAIN else None


def candidate_updates(candidates: Iterable[CandidateRecord]) -> list[Update]:
    """The DADB updates candidate records stand for: one for every candidate that earned a reward."""
    return [(c.agent_id, c.reward, c.cost_usd, c.input_tokens + c.output_tokens, c.domain)
            for c in candidates if c.reward is not None]


def result_updates(steps: Iterable[StepRecord]) -> list[Update]:
    """The DADB updates a finished question's records stand for: its subtasks' `candidate_updates`."""
    return [update for step in steps for update in candidate_updates(step.candidates)]


@dataclass(frozen=True)
class LearnOnce:
    """Applies keyed batches of DADB updates, each key at most once (across processes: the DADB keeps them)."""

    dadb: AgentDatabase

    def apply(self, key: str, updates: Iterable[Update]) -> bool:
        """Apply `updates` in one transaction unless `key` was applied before; True when they were."""
        return self.dadb.record_batch(key, updates)

    def reconcile(self, prefix: str, pending: Iterable[tuple[str, list[Update]]]) -> int:
        """Apply every (key, updates) batch whose key (under `prefix`) the DADB lacks; returns how many."""
        applied = self.dadb.applied_keys(prefix=prefix)
        return sum(self.apply(key, updates) for key, updates in pending if key not in applied)


@dataclass(frozen=True)
class Learner:
    """The route of one run's rewards (see the module): `Learner()` learns as they go; `for_run` picks the
    route for a run whose owner would rather learn once; a test-mode run's context turns any learner off
    (`for_mode`)."""

    route: Route = "as_they_go"
    once: LearnOnce | None = None
    """The keyed batches of a learn-once run (route "once")."""

    def __post_init__(self) -> None:
        if (self.route == "once") != (self.once is not None):
            raise ValueError("a learner learns once exactly when it is given a LearnOnce")

    @classmethod
    def for_run(cls, settings: ReSoSettings, selector: Any) -> Learner:
        """Learn once when the run trains a selector that learns into a DADB; else as they go (a test-mode
        run, or a selector whose updates write nothing: a random or pinned baseline)."""
        dadb = learning_dadb(selector) if settings.mode == Mode.TRAIN else None
        return cls("once", LearnOnce(dadb)) if dadb is not None else cls().for_mode(settings.mode)

    def once_where_possible(self, settings: ReSoSettings, selector: Any) -> Learner:
        """This learner if it learns once already, else `for_run`'s (the owner of a checkpointed run)."""
        return self if self.once is not None else Learner.for_run(settings, selector)

    def for_mode(self, mode: str) -> Learner:
        """This learner for a run in `mode`: a test-mode run learns nothing, whatever it was given."""
        return self if mode == Mode.TRAIN else Learner("off")

    @property
    def rewards(self) -> bool:
        """Whether subtasks work out their candidates' rewards (not in a run that learns nothing)."""
        return self.route != "off"

    @property
    def writes_as_they_go(self) -> bool:
        """Whether `update` writes (to the DADB, through the selector): then call it off the event loop."""
        return self.route == "as_they_go"

    def update(self, selector: Selector, updates: Sequence[Update]) -> None:
        """A finished subtask's updates: sent to the selector as they go, else only recorded (nothing here)."""
        if not self.writes_as_they_go:
            return
        for agent_id, reward, cost_usd, tokens, domain in updates:
            selector.update(agent_id, reward, cost_usd, tokens, domain=domain)

    def pending(self, steps: Iterable[StepRecord]) -> list[Update] | None:
        """A finished question's updates for its owner to apply (`apply`); None when nothing is left to
        apply (learned as they went, or nothing learned)."""
        return result_updates(steps) if self.once is not None else None

    def apply(self, key: str, updates: Iterable[Update]) -> bool:
        """Apply a question's pending updates under `key`, once; False when applied before or not learning once."""
        return self.once.apply(key, updates) if self.once is not None else False

    def reconcile(self, prefix: str, pending: Iterable[tuple[str, list[Update]]]) -> int:
        """`LearnOnce.reconcile` for a learn-once run; 0 for any other (nothing of it was left pending)."""
        return self.once.reconcile(prefix, pending) if self.once is not None else 0
