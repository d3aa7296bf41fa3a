"""`open_dadb`: the agent database a `--db` value names: a PostgreSQL server by URL, else a SQLite file.

`postgresql://…` and `postgres://…` open `PostgresDADB` (psycopg, from the `postgres` extra); any other
value is a SQLite path (`DADB`), and None or '' an in-memory SQLite DADB for this process alone. The CLI
reads `RESO_DB_URL` as the default of `--db` (`DB_URL_ENV`); an explicit `--db` wins.

Only training creates a DADB: in test mode a missing file, or a database without the DADB's tables, is
refused (`DADBMissingError`), so a mistyped path never runs on an empty DADB made for the occasion.
"""

from __future__ import annotations

from pathlib import Path

from reso.agents.dadb.base import AgentDatabase, DADBError, Mode
from reso.agents.dadb.sqlite import DADB
from reso.agents.dadb.url import is_postgres_url

DB_URL_ENV = "RESO_DB_URL"


def open_dadb(url_or_path: str | Path | None, mode: Mode = Mode.TRAIN) -> AgentDatabase:
    """The DADB at `url_or_path` in `mode`, created when missing in train mode only.

    Raises:
        DADBMissingError: Test mode, and no DADB there (a missing file; a database without the DADB's tables).
        DADBError: The database cannot be opened or reached, or psycopg is not installed for a URL.
    """
    if is_postgres_url(url_or_path):
        try:
            from reso.agents.dadb.postgres import PostgresDADB
        except ImportError:
            raise DADBError("a postgresql:// DADB needs psycopg: pip install 'reso-langgraph[postgres]'") from None
        return PostgresDADB(str(url_or_path), mode=mode, create=mode == Mode.TRAIN)
    return DADB(url_or_path or None, mode=mode, create=mode == Mode.TRAIN)
