"""The evaluation runner's side of exactly-once DADB learning: the results file as the log of what to learn.

While an item runs, its subtasks record their candidates' rewards without writing them (the run context's
`reso.graphs.learning.Learner`, learning once). When the item finishes, the runner first appends its results line,
which carries the item's updates, and then applies them in one DADB transaction keyed `RUN_ID/ITEM_ID`
(`Learner.apply`). The results file is therefore the log of what must be learned:

- killed before the line is complete: nothing was applied; the item runs again on resume;
- killed after the line, before the DADB commit: `reconcile` applies the line's updates on resume;
- killed after both: the key is in the DADB and `reconcile` skips it.

So the DADB's visits always equal the candidate updates recorded in `results.jsonl`. The run id lives in
`OUT/run.json`, so every resume of one output folder uses the same keys, and two folders training on one
DADB never collide. Items that change nothing (test mode, baselines that learn nothing) carry no updates."""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Update
from reso.graphs.learning import Learner

__all__ = ["item_key", "reconcile", "row_updates", "run_id"]


def run_id(out: Path) -> str:
    """The id of the run writing into `out`: read from `out/run.json`, created there on first use."""
    path = out / "run.json"
    if not path.exists():
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / f".run.json.{os.getpid()}"
        tmp.write_text(json.dumps({"run_id": uuid.uuid4().hex}), encoding="utf-8")
        with contextlib.suppress(FileExistsError):
            # A hard link never replaces an existing file: the first run to get here wins.
            os.link(tmp, path)
        tmp.unlink()
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["run_id"])
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: unreadable run id ({error}); restore it or start a new output folder") from None


def item_key(run: str, item_id: str) -> str:
    return f"{run}/{item_id}"


def row_updates(row: dict[str, Any]) -> list[Update]:
    """The DADB updates a results line carries (none for lines of runs that learn nothing)."""
    return [(str(a), float(r), float(c), int(t), d) for a, r, c, t, d in row.get("dadb_updates") or []]


def reconcile(learner: Learner, run: str, rows: Iterable[dict[str, Any]]) -> int:
    """Apply the updates of every line whose key the DADB lacks; returns how many lines were applied (none
    unless `learner` learns once)."""
    pending = ((item_key(run, row["id"]), row_updates(row)) for row in rows if "dadb_updates" in row)
    return learner.reconcile(f"{run}/", pending)
