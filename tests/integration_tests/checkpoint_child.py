"""A child process for the checkpoint-resume test: solves a three-step chain with slow scripted agents
through `ReSo(checkpoint_path=...)` in training mode, logging every agent call (at its start) to a file
and learning into a DADB file next to the checkpoint (or, for a postgresql:// checkpoint URL, into the
same database).

Usage: python -m tests.integration_tests.checkpoint_child CHECKPOINT_FILE_OR_URL CALL_LOG
Prints the result and the DADB's visit count as one JSON line when the question is answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Collection
from typing import Any

from reso.agents.dadb.open import open_dadb
from reso.agents.dadb.sqlite import DADB
from reso.agents.dadb.url import is_postgres_url
from reso.graphs.api import ReSo
from reso.graphs.settings import ReSoSettings
from tests.engine_fakes import ScriptedAnswerer, scripted_team

PLAN = [
    {"id": "0", "instruction": "Step A: how many apples?", "depends_on": []},
    {"id": "1", "instruction": "Step B: how many boxes?", "depends_on": ["0"]},
    {"id": "2", "instruction": "Step C: how many crates?", "depends_on": ["1"]},
    {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1]*Answer[2].",
     "depends_on": ["0", "1", "2"]},
]
ANSWERS = {"Step A": "\\boxed{2}", "Step B": "\\boxed{3}", "Step C": "\\boxed{4}"}
# Step C is slow, so the parent can kill the run while C is in flight and A and B are long saved.
DELAYS = {"Step A": 0.3, "Step B": 0.3, "Step C": 3.0}


class LoggedAnswerer(ScriptedAnswerer):
    """Appends the subtask key of every call to `log` before answering."""

    log: str = ""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs: Any):
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(self._key(messages) + "\n")
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


class LearningSelector:
    """The scripted selector, learning into a real DADB as ReputationSelector does."""

    def __init__(self, inner: Any, dadb: DADB) -> None:
        self.inner, self.dadb = inner, dadb

    def select(self, subtask: str, k: int | None = None, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Any]:
        return self.inner.select(subtask, k, domain=domain, exclude=exclude)

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        self.dadb.record(agent_id, reward, cost_usd, tokens, domain)


def dadb_path(checkpoint: str) -> str:
    """Beside a checkpoint file; for a postgresql:// checkpoint, in the same database."""
    return checkpoint if is_postgres_url(checkpoint) else f"{checkpoint}.dadb.sqlite"


def main(checkpoint: str, log: str) -> None:
    model = LoggedAnswerer(answers=ANSWERS, delays=DELAYS, calls=[], log=log)
    team = scripted_team({"a": model}, lambda s: ["calc"] if s.startswith("Please calculate") else ["a"])
    team.dadb = open_dadb(dadb_path(checkpoint))
    team.selector = LearningSelector(team.selector, team.dadb)
    reso = ReSo(ReSoSettings(mode="train"), team=team, checkpoint_path=checkpoint)
    result = asyncio.run(reso.asolve("three steps", plan=PLAN, thread_id="crash-test"))
    print(json.dumps({"answer": result.answer, "status": result.status,
                      "steps": {step.id: step.value for step in result.steps},
                      "candidates": sum(len(step.candidates) for step in result.steps),
                      "visits": team.dadb.total_visits()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
