"""The Dynamic Agent Database (DADB) in SQLite: per-agent reward and cost statistics, safe under concurrency.

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

This is the embedded default; `reso.agents.dadb.postgres.PostgresDADB` keeps the same contract
(`reso.agents.dadb.base.AgentDatabase`) on a PostgreSQL server, and `reso.agents.dadb.open.open_dadb` picks
one from a path or URL.
"""

from __future__ import annotations

import atexit
import contextlib
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from reso.agents.dadb.base import (
    FIELDS,
    AgentDatabase,
    DADBError,
    DADBMissingError,
    Mode,
    Row,
    Update,
    check_domain,
    stats_by_agent,
    stats_from_row,
    stats_rows,
    visits_of,
)
from reso.agents.dadb.stats import AgentStats

__all__ = ["DADB", "AgentStats", "DADBError", "Mode", "Update"]

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

# DADBs still open when the interpreter exits are closed then, so their log is folded into the file.
_OPEN: weakref.WeakSet[DADB] = weakref.WeakSet()


@atexit.register
def _close_open_dadbs() -> None:
    for dadb in list(_OPEN):
        dadb.close()


class DADB(AgentDatabase):
    """Agent statistics in SQLite (a file in WAL mode, or in memory when `path` is None). With `create=False`
    only a file that exists is opened (else `DADBMissingError`): neither the file nor its folders are made."""

    def __init__(self, path: str | Path | None = None, mode: Mode = Mode.TRAIN, *, busy_timeout_s: float = 60.0,
                 create: bool = True):
        super().__init__(mode)
        self.path = Path(path) if path is not None else None
        self._lock = threading.RLock()
        self._writes = 0
        self._closed = False
        target = str(self.path) if self.path is not None else ":memory:"
        if self.path is not None:
            if not create and not self.path.exists():
                raise DADBMissingError(target)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:  # a file where a folder above it should be
                raise DADBError(f"{target}: cannot open as a DADB: {error}") from None
        try:
            if self.path is not None and not create:  # read-write, never create (a file removed meanwhile)
                self._conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=rw", uri=True,
                                             timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
            else:
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
    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction under the lock: `BEGIN IMMEDIATE` takes the file's write lock up front
        (a deferred transaction could fail to upgrade mid-way), rolled back on any exception."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _write_rows(self, rows: Sequence[Row]) -> None:
        with self._write():
            self._conn.executemany(_UPSERT, rows)
            self._writes += 1

    def _write_batch(self, key: str, rows: Sequence[Row]) -> bool:
        visits = visits_of(rows)
        with self._write():
            inserted = self._conn.execute(
                "INSERT OR IGNORE INTO applied (key, visits, applied_at) VALUES (?, ?, ?)",
                (key, visits, time.time())).rowcount
            if inserted:
                self._conn.executemany(_UPSERT, rows)
                self._writes += 1
        return bool(inserted)

    def applied_keys(self, prefix: str = "") -> set[str]:
        with self._lock:
            rows = self._conn.execute("SELECT key FROM applied WHERE substr(key, 1, ?) = ?",
                                      (len(prefix), prefix)).fetchall()
        return {row[0] for row in rows}

    # -- reads --------------------------------------------------------------------------------------
    def stats(self, agent_ids: Sequence[str] | None = None, domain: str | None = None) -> dict[str, AgentStats]:
        label = check_domain(domain)
        query = f"SELECT agent_id, {', '.join(FIELDS)} FROM agent_stats WHERE domain = ?"
        with self._lock:
            if agent_ids is not None and len(agent_ids) <= 500:
                marks = ",".join("?" * len(agent_ids))
                rows = self._conn.execute(f"{query} AND agent_id IN ({marks})", (label, *agent_ids)).fetchall()
            else:
                rows = self._conn.execute(query, (label,)).fetchall()
        return stats_by_agent(rows, agent_ids, domain)

    def total_visits(self, domain: str | None = None) -> int:
        label = check_domain(domain)
        with self._lock:
            row = self._conn.execute("SELECT COALESCE(SUM(visits), 0) FROM agent_stats WHERE domain = ?", (label,))
            return int(row.fetchone()[0])

    def domains(self) -> list[str]:
        with self._lock:
            rows = self._conn.execute("SELECT DISTINCT domain FROM agent_stats WHERE domain != '' ORDER BY domain")
            return [row[0] for row in rows]

    def all_stats(self) -> list[AgentStats]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT agent_id, domain, {', '.join(FIELDS)} FROM agent_stats ORDER BY domain, agent_id"
            ).fetchall()
        return [stats_from_row(row[0], row[2:], row[1] or None) for row in rows]

    # -- export / import ----------------------------------------------------------------------------
    def load_stats(self, stats: Iterable[AgentStats], *, replace: bool = True) -> int:
        rows = stats_rows(stats)
        with self._write():
            if replace:
                self._conn.execute("DELETE FROM agent_stats")
            self._conn.executemany(
                "INSERT OR REPLACE INTO agent_stats (agent_id, domain, visits, reward_sum, reward_sq_sum, "
                "cost_sum, token_sum, last_update) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._writes += 1
        return len(rows)

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

    def __repr__(self) -> str:
        return f"DADB(path={str(self.path) if self.path else None!r}, mode={self._mode.value!r})"
