"""The one line a test-mode run shows when its DADB holds no training record.

A frozen DADB that learned nothing leaves selection without a record to go on, and the run's answers are
then not what a trained team would give. A DADB named explicitly that has learned nothing gets a warning
(it was most likely meant to be a trained one); an in-memory DADB, which holds no record, a note. A test run
on the default pool that names no DADB reads the trained one shipped with the package, which has learned:
it gets neither.
The command line prints the line once, before the run; the Python API gives it as an `UntrainedDADBWarning`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reso.agents.dadb.base import AgentDatabase, Mode
from reso.agents.dadb.url import redact
from reso.graphs.settings import ReSoSettings


class UntrainedDADBWarning(UserWarning):
    """A test-mode run's DADB holds no training record (the Python API's form of `untrained_dadb`)."""


@dataclass(frozen=True)
class UntrainedDADB:
    """What to tell: `level` is warning (a DADB named explicitly) or note (the in-memory default)."""

    level: Literal["warning", "note"]
    message: str

    @property
    def line(self) -> str:
        return f"{self.level}: {self.message}"


def untrained_dadb(settings: ReSoSettings, dadb: AgentDatabase | None) -> UntrainedDADB | None:
    """The notice for a test-mode run on `dadb` (the DADB of the team built for `settings`) when it holds no
    training record; None in training mode, without a DADB, or when it has learned something."""
    if settings.mode != Mode.TEST or dadb is None or dadb.total_visits() > 0:
        return None
    if settings.db:
        return UntrainedDADB("warning", f"DADB {redact(settings.db)} has learned nothing (no training record): "
                                        "selection has no record to go on")
    return UntrainedDADB("note", "no DADB given for this pool (--db, or db= in Python; the trained one shipped goes "
                                 "with the default pool), so no record was learned: selection has none to go on; "
                                 "a training run makes one (reso eval --mode train --db FILE)")
