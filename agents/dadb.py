"""The Dynamic Agent Database (DADB): per-agent reward and cost statistics, safe under concurrency.

One SQLite table holds, per agent and optionally per (agent, subtask domain): visits, reward sum and sum of
squares, cost and token sums, and the time of the last update. Global rows use the reserved domain `''`;
a call to `record` with a domain label updates both the global row and the domain row in one transaction.

Concurrency: the file is opened in WAL mode with a busy timeout, and every update is a single
`INSERT ... ON CONFLICT DO UPDATE SET visits = visits + 1, ...` inside `BEGIN IMMEDIATE`, so increments
from several threads or processes are applied by SQLite itself and none is lost. In `test` mode the
database is frozen: `record` writes nothing and returns False.

Exactly-once batches: `record_batch(key, updates)` applies a batch and stores its key in the `applied`
table in the same transaction; a batch whose key is already there is skipped. Evaluation runs key each
item's updates by run and item, so a resumed run never applies an item twice.

`version` changes whenever the data may have changed (a write through this object, or a commit by any
other connection, read cheaply from `PRAGMA data_version`); readers such as the selector's statistics
cache use it to know when to reload.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Literal, Self

from reso.agents.agent_stats import AgentStats

Mode = Literal["train", "test"]
_GLOBAL = ""
_FORMAT = "reso-dadb"
_FIELDS = ("visits", "reward_sum", "reward_sq_sum", "cost_sum", "token_sum", "last_update")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_stats (
    agent_id TEXT NOT NULL,
    domain TEXT NOT NULL,
    visits INTEGER NOT NULL DEFAULT 0,
    reward_sum REAL NOT NULL DEFAULT 0,
    reward_sq_sum REAL NOT NULL DEFAULT 0,
    cost_sum REAL NOT NULL DEFAULT 0,
    token_sum INTEGER NOT NULL DEFAULT 0,
    last_update REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, domain)
) WITHOUT ROWID
"""

_UPSERT = """
INSERT INTO agent_stats (agent_id, domain, visits, reward_sum, reward_sq_sum, cost_sum, token_sum, last_update)
VALUES (?, ?, 1, ?, ?, ?, ?, ?)
ON CONFLICT (agent_id, domain) DO UPDATE SET
    visits = visits + 1,
    reward_sum = reward_sum + excluded.reward_sum,
    reward_sq_sum = reward_sq_sum + excluded.reward_sq_sum,
    cost_sum = cost_sum + excluded.cost_sum,
    token_sum = token_sum + excluded.token_sum,
    last_update = excluded.last_update
"""


_APPLIED_SCHEMA = """
CREATE TABLE IF NOT EXISTS applied (
    key TEXT PRIMARY KEY,
    visits INTEGER NOT NULL,
    applied_at REAL NOT NULL
) WITHOUT ROWID
"""

Update = tuple[str, float, float, int, str | None]


def _check_domain(domain: str | None) -> str:
    if domain is None:
        return _GLOBAL
    if not isinstance(domain, str) or not domain:
        raise ValueError(f"domain must be a non-empty string or None, got {domain!r}")
    return domain


# DADBs still open when the interpreter exits are closed then, so their log is folded into the file.
_OPEN: weakref.WeakSet[DADB] = weakref.WeakSet()


@atexit.register
def _close_open_dadbs() -> None:
    for dadb in list(_OPEN):
        dadb.close()


class DADBError(ValueError):
    """The DADB file cannot be opened as one (not SQLite, or a table of another shape); names the file."""


class DADB:
    """Agent statistics in SQLite (a file in WAL mode, or in memory when `path` is None)."""

    def __init__(self, path: str | Path | None = None, mode: Mode = "train", *, busy_timeout_s: float = 60.0):
        if mode not in ("train", "test"):
            raise ValueError(f"DADB mode must be 'train' or 'test', got {mode!r}")
        self.path = Path(path) if path is not None else None
        self._mode: Mode = mode
        self._lock = threading.RLock()
        self._writes = 0
        self._closed = False
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = str(self.path) if self.path is not None else ":memory:"
        try:
            self._conn = sqlite3.connect(target, timeout=busy_timeout_s, isolation_level=None,
                                         check_same_thread=False)
        except sqlite3.Error as error:  # a folder, no permission
            raise DADBError(f"{target}: cannot open as a DADB: {error}") from None
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(_SCHEMA)
            self._conn.execute(_APPLIED_SCHEMA)
        except sqlite3.DatabaseError as error:  # a file that is not SQLite, or a DADB of another shape
            self._conn.close()
            raise DADBError(f"{target}: cannot use as a DADB: {error}") from None
        _OPEN.add(self)

    # -- mode ---------------------------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        return self._mode

    def freeze(self) -> None:
        """Switch to test mode: later `record` calls write nothing."""
        self._mode = "test"

    @property
    def journal_mode(self) -> str:
        with self._lock:
            return str(self._conn.execute("PRAGMA journal_mode").fetchone()[0])

    @property
    def version(self) -> tuple[int, int]:
        """Changes whenever the stored data may have changed (own writes, other connections' commits)."""
        with self._lock:
            return self._writes, int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    # -- writes -------------------------------------------------------------------------------------
    def record(self, agent_id: str, reward: float, cost_usd: float, tokens: int, domain: str | None = None) -> bool:
        """Add one visit of `agent_id` with its reward, cost and tokens (and to its domain row if given).

        Returns:
            True when written; False in test mode (nothing is written).

        Raises:
            ValueError: A non-finite reward, a negative or non-finite cost, negative tokens, an empty domain.
        """
        return self.record_many([(agent_id, reward, cost_usd, tokens, domain)]) == 1

    def record_many(self, updates: Iterable[Update]) -> int:
        """Record several visits `(agent_id, reward, cost_usd, tokens, domain)` in one transaction.

        Returns:
            The number of visits written (0 in test mode).
        """
        rows = self._rows(updates)
        if self._mode == "test" or not rows:
            return 0
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(_UPSERT, rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self._writes += 1
        return sum(1 for row in rows if row[1] == _GLOBAL)

    def record_batch(self, key: str, updates: Iterable[Update]) -> bool:
        """Apply `updates` and remember `key`, in one transaction, unless `key` was applied before.

        A crash leaves either both the updates and the key or neither, so calling this again with the
        same key after a restart can never count a batch twice.

        Returns:
            True when applied now; False when the key was already applied or in test mode (nothing written).

        Raises:
            ValueError: An empty key, or an invalid update (see `record`).
        """
        if not key:
            raise ValueError("the batch key must be a non-empty string")
        rows = self._rows(updates)
        if self._mode == "test":
            return False
        visits = sum(1 for row in rows if row[1] == _GLOBAL)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                inserted = self._conn.execute(
                    "INSERT OR IGNORE INTO applied (key, visits, applied_at) VALUES (?, ?, ?)",
                    (key, visits, time.time())).rowcount
                if inserted:
                    self._conn.executemany(_UPSERT, rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            if inserted:
                self._writes += 1
        return bool(inserted)

    def applied_keys(self, prefix: str = "") -> set[str]:
        """Keys of the batches applied so far (those starting with `prefix`)."""
        with self._lock:
            rows = self._conn.execute("SELECT key FROM applied WHERE substr(key, 1, ?) = ?",
                                      (len(prefix), prefix)).fetchall()
        return {row[0] for row in rows}

    @staticmethod
    def _rows(updates: Iterable[Update]) -> list[tuple[str, str, float, float, float, int, float]]:
        """Validated upsert rows: each visit's global row, plus its domain row when it has a domain."""
        rows: list[tuple[str, str, float, float, float, int, float]] = []
        now = time.time()
        for agent_id, reward, cost_usd, tokens, domain in updates:
            if not agent_id:
                raise ValueError("agent_id must be a non-empty string")
            reward, cost_usd = float(reward), float(cost_usd)
            if not math.isfinite(reward):
                raise ValueError(f"reward for {agent_id!r} must be finite, got {reward}")
            if not math.isfinite(cost_usd) or cost_usd < 0:
                raise ValueError(f"cost_usd for {agent_id!r} must be finite and >= 0, got {cost_usd}")
            if int(tokens) < 0:
                raise ValueError(f"tokens for {agent_id!r} must be >= 0, got {tokens}")
            label = _check_domain(domain)
            for row_domain in {_GLOBAL, label}:
                rows.append((agent_id, row_domain, reward, reward * reward, cost_usd, int(tokens), now))
        return rows

    # -- reads --------------------------------------------------------------------------------------
    def stats(self, agent_ids: Sequence[str] | None = None, domain: str | None = None) -> dict[str, AgentStats]:
        """Statistics per agent, globally or for one domain.

        Args:
            agent_ids: Agents to report; those never recorded get zero statistics. None: every recorded agent.
            domain: A domain label for per-(agent, domain) statistics; None for all domains together.
        """
        label = _check_domain(domain)
        query = f"SELECT agent_id, {', '.join(_FIELDS)} FROM agent_stats WHERE domain = ?"
        with self._lock:
            if agent_ids is not None and len(agent_ids) <= 500:
                marks = ",".join("?" * len(agent_ids))
                rows = self._conn.execute(f"{query} AND agent_id IN ({marks})", (label, *agent_ids)).fetchall()
            else:
                rows = self._conn.execute(query, (label,)).fetchall()
        found = {row[0]: AgentStats(*row, domain=domain) for row in rows}
        if agent_ids is None:
            return found
        return {agent_id: found.get(agent_id) or AgentStats(agent_id, domain=domain) for agent_id in agent_ids}

    def total_visits(self, domain: str | None = None) -> int:
        label = _check_domain(domain)
        with self._lock:
            row = self._conn.execute("SELECT COALESCE(SUM(visits), 0) FROM agent_stats WHERE domain = ?", (label,))
            return int(row.fetchone()[0])

    def domains(self) -> list[str]:
        """Domain labels that have statistics."""
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT domain FROM agent_stats WHERE domain != '' ORDER BY domain")
            return [row[0] for row in rows]

    def all_stats(self) -> list[AgentStats]:
        """Every row, global ones (domain None) first, in a stable order."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT agent_id, domain, {', '.join(_FIELDS)} FROM agent_stats ORDER BY domain, agent_id"
            ).fetchall()
        return [AgentStats(row[0], *row[2:], domain=row[1] or None) for row in rows]

    # -- export / import ----------------------------------------------------------------------------
    def load_stats(self, stats: Iterable[AgentStats], *, replace: bool = True) -> int:
        """Write whole statistics rows (e.g. from an export), replacing the table's content by default.

        Loading is an explicit administrative step, so it is allowed in test mode too.
        """
        rows = [
            (s.agent_id, _check_domain(s.domain), int(s.visits), float(s.reward_sum), float(s.reward_sq_sum),
             float(s.cost_sum), int(s.token_sum), float(s.last_update))
            for s in stats
        ]
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                if replace:
                    self._conn.execute("DELETE FROM agent_stats")
                self._conn.executemany(
                    "INSERT OR REPLACE INTO agent_stats (agent_id, domain, visits, reward_sum, reward_sq_sum, "
                    "cost_sum, token_sum, last_update) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self._writes += 1
        return len(rows)

    def export_json(self, path: str | Path) -> None:
        """Write every row to a JSON file (floats keep their exact value through `json`)."""
        document = {"format": _FORMAT, "version": 1, "stats": [asdict(s) for s in self.all_stats()]}
        Path(path).write_text(json.dumps(document, indent=1), encoding="utf-8")

    def import_json(self, path: str | Path, *, replace: bool = True) -> int:
        """Load a file written by `export_json`; returns the number of rows loaded.

        Raises:
            ValueError: The file is not a DADB export, or a row has a missing or wrong field.
        """
        source = Path(path)
        try:
            document = json.loads(source.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}:{error.lineno}: invalid JSON: {error.msg}") from None
        if not isinstance(document, dict) or document.get("format") != _FORMAT:
            raise ValueError(f"{source}: not a DADB export (expected \"format\": \"{_FORMAT}\")")
        stats: list[AgentStats] = []
        for index, row in enumerate(document.get("stats", [])):
            try:
                stats.append(AgentStats(**row))
            except TypeError as error:
                raise ValueError(f"{source}: stats[{index}]: {error}") from None
        return self.load_stats(stats, replace=replace)

    # -- lifetime -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Fold the write-ahead log into the database file and close: the file alone is then the DADB
        (copying a WAL database without its `-wal` file would otherwise lose committed updates)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.path is not None:
                with contextlib.suppress(sqlite3.Error):  # another process may hold the log; it checkpoints
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DADB(path={str(self.path) if self.path else None!r}, mode={self._mode!r})"
