"""The DADB on a PostgreSQL server: the SQLite DADB's schema and guarantees, shared by many machines.

Same tables (`agent_stats`, `applied`), same atomic increments (`INSERT ... ON CONFLICT DO UPDATE SET
visits = s.visits + 1, ...`, applied by the server, so concurrent writers lose nothing), the same
exactly-once `record_batch` (the key and the updates in one transaction; a second writer of the same key
waits for the first and then skips), train/test modes and JSON export/import (`AgentDatabase`).

Rows of one transaction are written in (agent, domain) order, so two batches touching the same agents lock
them in the same order and cannot deadlock. A server that restarts or drops the connection mid-run is
reconnected and the interrupted transaction retried for up to `retry_s` seconds, except a plain
`record_many` whose COMMIT itself was cut off (it may have landed, and it has no key to tell): that one
raises. `record_batch` is always retried: its key makes a second application impossible.

`version` reads the sequence `dadb_version`, which every write bumps after its commit; a reader that sees
a new value therefore also sees the data behind it. The URL's password never leaves this object: errors
and the repr show the URL redacted (`reso.agents.dadb.url`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import psycopg

from reso.agents.dadb.base import (
    FIELDS,
    AgentDatabase,
    DADBError,
    DADBMissingError,
    Mode,
    Row,
    check_domain,
    stats_by_agent,
    stats_from_row,
    stats_rows,
    visits_of,
)
from reso.agents.dadb.stats import AgentStats
from reso.agents.dadb.url import is_postgres_url, redact_url, scrub

T = TypeVar("T")
_COLUMNS = "agent_id, domain, " + ", ".join(FIELDS)

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS agent_stats (
        agent_id TEXT NOT NULL,
        domain TEXT NOT NULL,
        visits BIGINT NOT NULL DEFAULT 0,
        reward_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
        reward_sq_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
        cost_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
        token_sum BIGINT NOT NULL DEFAULT 0,
        last_update DOUBLE PRECISION NOT NULL DEFAULT 0,
        PRIMARY KEY (agent_id, domain)
    )""",
    """CREATE TABLE IF NOT EXISTS applied (
        key TEXT PRIMARY KEY,
        visits BIGINT NOT NULL,
        applied_at DOUBLE PRECISION NOT NULL
    )""",
    "CREATE SEQUENCE IF NOT EXISTS dadb_version",
]
# Concurrent CREATE ... IF NOT EXISTS can still collide in PostgreSQL's catalogue: one creator at a time.
_SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('reso-dadb-schema'))"
_HAS_SCHEMA = ("SELECT to_regclass('agent_stats') IS NOT NULL AND to_regclass('applied') IS NOT NULL "
               "AND to_regclass('dadb_version') IS NOT NULL")
_SHAPE_CHECKS = [f"SELECT {_COLUMNS} FROM agent_stats LIMIT 0", "SELECT key, visits, applied_at FROM applied LIMIT 0",
                 "SELECT last_value FROM dadb_version"]

_UPSERT = """
INSERT INTO agent_stats AS s (agent_id, domain, visits, reward_sum, reward_sq_sum, cost_sum, token_sum, last_update)
VALUES (%s, %s, 1, %s, %s, %s, %s, %s)
ON CONFLICT (agent_id, domain) DO UPDATE SET
    visits = s.visits + 1,
    reward_sum = s.reward_sum + excluded.reward_sum,
    reward_sq_sum = s.reward_sq_sum + excluded.reward_sq_sum,
    cost_sum = s.cost_sum + excluded.cost_sum,
    token_sum = s.token_sum + excluded.token_sum,
    last_update = excluded.last_update
"""
_LOAD = f"""
INSERT INTO agent_stats ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (agent_id, domain) DO UPDATE SET {", ".join(f"{name} = excluded.{name}" for name in FIELDS)}
"""
# Byte order, as SQLite sorts: the database's own collation may be a locale's.
_ORDER = 'ORDER BY domain COLLATE "C", agent_id COLLATE "C"'


def _scalar(cursor: psycopg.Cursor[Any]) -> Any:
    """The single value of a query that always returns one row (an aggregate, a sequence's state)."""
    row = cursor.fetchone()
    if row is None:
        raise psycopg.DataError("the query returned no row")
    return row[0]


class PostgresDADB(AgentDatabase):
    """Agent statistics in a PostgreSQL database named by a `postgresql://` URL. With `create=False` the DADB's
    tables must be there already (else `DADBMissingError`): none are created."""

    def __init__(self, url: str, mode: Mode = Mode.TRAIN, *, retry_s: float = 30.0,
                 connect_timeout_s: int = 10, create: bool = True) -> None:
        super().__init__(mode)
        self._create = create
        if not is_postgres_url(url):
            raise ValueError(f"not a PostgreSQL URL (postgresql://...): {redact_url(url)!r}")
        self.location = redact_url(url)
        self._url = url
        self._retry_s = retry_s
        self._connect_timeout_s = connect_timeout_s
        self._lock = threading.RLock()
        self._conn: psycopg.Connection | None = None
        self._writes = 0
        self._own_bumps = 0
        self._closed = False
        # Opening fails fast (a wrong URL or password is not worth waiting for); later calls retry.
        try:
            self._run(self._create_schema, idempotent=True, retry_s=0.0)
        except DADBMissingError:
            self.close()
            raise

    # -- connection and retries ---------------------------------------------------------------------
    def _error(self, what: str, error: BaseException) -> DADBError:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return DADBError(f"{self.location}: {what}: {scrub(first, self._url)}")

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            self._conn = psycopg.connect(self._url, autocommit=True, connect_timeout=self._connect_timeout_s,
                                         application_name="reso-dadb")
        return self._conn

    def _run(self, work: Callable[[psycopg.Connection], T], *, idempotent: bool, retry_s: float | None = None) -> T:
        """`work` in one transaction; an interrupted one (lost connection, server restart, deadlock) is retried.

        Hand-written rather than a retry library's decorator: whether a retry is safe depends on how far
        the attempt got (before COMMIT, always; during COMMIT, only for idempotent work).
        """
        deadline = time.monotonic() + (self._retry_s if retry_s is None else retry_s)
        delay = 0.05
        with self._lock:
            if self._closed:
                raise DADBError(f"{self.location}: the DADB is closed")
            while True:
                committing = False
                try:
                    connection = self._connection()
                    with connection.transaction():
                        result = work(connection)
                        committing = True
                    return result
                except psycopg.OperationalError as error:
                    if (committing and not idempotent) or time.monotonic() + delay > deadline:
                        raise self._error("cannot reach the DADB" if not committing else
                                          "the commit was interrupted (it may or may not have landed)",
                                          error) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)
                except psycopg.Error as error:  # a table of another shape, no permission: not transient
                    raise self._error("cannot use as a DADB", error) from None

    def _create_schema(self, connection: psycopg.Connection) -> None:
        if not _scalar(connection.execute(_HAS_SCHEMA)):
            if not self._create:  # a database without the DADB's tables holds no DADB
                raise DADBMissingError(self.location)
            connection.execute(_SCHEMA_LOCK)
            for statement in _SCHEMA:
                connection.execute(statement)
        for statement in _SHAPE_CHECKS:
            connection.execute(statement)

    def _bump_version(self) -> None:
        """Tell other readers the data changed (after the commit, so a new version implies new data)."""
        try:
            self._connection().execute("SELECT nextval('dadb_version')")
        except psycopg.Error:  # the write stands; readers notice it at the next bump
            return
        self._own_bumps += 1

    # -- mode and version ---------------------------------------------------------------------------
    @property
    def version(self) -> tuple[int, int]:
        """(own writes, commits by others): the sequence less this object's own bumps."""
        def read(connection: psycopg.Connection) -> int:
            # A fresh sequence shows last_value 1 before its first nextval: count that as 0.
            query = "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM dadb_version"
            return int(_scalar(connection.execute(query)))

        with self._lock:
            return self._writes, self._run(read, idempotent=True) - self._own_bumps

    # -- writes -------------------------------------------------------------------------------------
    def _upsert(self, connection: psycopg.Connection, rows: Sequence[Row]) -> None:
        with connection.cursor() as cursor:
            ordered: list[Row] = sorted(rows, key=lambda row: (row[0], row[1]))
            cursor.executemany(_UPSERT, ordered)

    def _write_rows(self, rows: Sequence[Row]) -> None:
        with self._lock:
            self._run(lambda connection: self._upsert(connection, rows), idempotent=False)
            self._writes += 1
            self._bump_version()

    def _write_batch(self, key: str, rows: Sequence[Row]) -> bool:
        def apply(connection: psycopg.Connection) -> bool:
            inserted = connection.execute(
                "INSERT INTO applied (key, visits, applied_at) VALUES (%s, %s, %s) ON CONFLICT (key) DO NOTHING",
                (key, visits_of(rows), time.time())).rowcount
            if inserted:
                self._upsert(connection, rows)
            return bool(inserted)

        with self._lock:
            applied = self._run(apply, idempotent=True)
            if applied:
                self._writes += 1
                self._bump_version()
        return applied

    def applied_keys(self, prefix: str = "") -> set[str]:
        rows = self._run(lambda connection: connection.execute(
            "SELECT key FROM applied WHERE starts_with(key, %s)", (prefix,)).fetchall(), idempotent=True)
        return {row[0] for row in rows}

    # -- reads --------------------------------------------------------------------------------------
    def stats(self, agent_ids: Sequence[str] | None = None, domain: str | None = None) -> dict[str, AgentStats]:
        label = check_domain(domain)
        query = f"SELECT agent_id, {', '.join(FIELDS)} FROM agent_stats WHERE domain = %s"
        if agent_ids is None:
            rows = self._run(lambda connection: connection.execute(query, (label,)).fetchall(), idempotent=True)
        else:
            rows = self._run(lambda connection: connection.execute(
                f"{query} AND agent_id = ANY(%s)", (label, list(agent_ids))).fetchall(), idempotent=True)
        return stats_by_agent(rows, agent_ids, domain)

    def total_visits(self, domain: str | None = None) -> int:
        label = check_domain(domain)
        query = "SELECT COALESCE(SUM(visits), 0) FROM agent_stats WHERE domain = %s"
        total = self._run(lambda connection: _scalar(connection.execute(query, (label,))), idempotent=True)
        return int(total)

    def domains(self) -> list[str]:
        rows = self._run(lambda connection: connection.execute(
            "SELECT domain FROM agent_stats WHERE domain != '' GROUP BY domain ORDER BY domain COLLATE \"C\"").fetchall(),
            idempotent=True)
        return [row[0] for row in rows]

    def all_stats(self) -> list[AgentStats]:
        rows = self._run(lambda connection: connection.execute(
            f"SELECT {_COLUMNS} FROM agent_stats {_ORDER}").fetchall(), idempotent=True)
        return [stats_from_row(row[0], row[2:], row[1] or None) for row in rows]

    # -- export / import ----------------------------------------------------------------------------
    def load_stats(self, stats: Iterable[AgentStats], *, replace: bool = True) -> int:
        rows = stats_rows(stats)

        def load(connection: psycopg.Connection) -> None:
            if replace:
                connection.execute("DELETE FROM agent_stats")
            with connection.cursor() as cursor:
                cursor.executemany(_LOAD, rows)

        with self._lock:
            self._run(load, idempotent=True)  # writing whole rows twice leaves the same rows
            self._writes += 1
            self._bump_version()
        return len(rows)

    # -- lifetime -----------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._conn is not None:
                self._conn.close()

    def __repr__(self) -> str:
        return f"PostgresDADB(url={self.location!r}, mode={self._mode.value!r})"
