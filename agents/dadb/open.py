"""`open_dadb`: the agent database a `--db` value names: a PostgreSQL server by URL, a DADB export, else a
SQLite file; and `default_db`, the DADB a run uses when it names none.

`postgresql://…` and `postgres://…` open `PostgresDADB` (psycopg, from the `postgres` extra); a `.json` file
is a DADB export (`AgentDatabase.export_json`), read into memory for this process (test mode only: the file
is never written); any other value is a SQLite path (`DADB`), and None or '' an in-memory SQLite DADB for
this process alone. The CLI reads `RESO_DB_URL` as the default of `--db` (`DB_URL_ENV`); an explicit `--db`
wins.

Only training creates a DADB: in test mode a missing file, or a database without the DADB's tables, is
refused (`DADBMissingError`), so a mistyped path never runs on an empty DADB made for the occasion.

A test run on the default pool that names no DADB reads the trained one shipped with the package
(`default_db`; `reso.agents.defaults.default_dadb_path`, made by the main job's training): a newcomer's first
question is answered by a team that has learned something. Any other pool, or a training run, starts from
an empty in-memory DADB, as before.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from reso.agents.dadb.base import AgentDatabase, DADBError, DADBMissingError, Mode
from reso.agents.dadb.sqlite import DADB
from reso.agents.dadb.url import is_postgres_url

DB_URL_ENV = "RESO_DB_URL"
EXPORT_SUFFIX = ".json"


def is_export(url_or_path: str | Path | None) -> bool:
    """Whether `url_or_path` names a DADB export (a `.json` file) rather than a database."""
    return bool(url_or_path) and not is_postgres_url(url_or_path) and str(url_or_path).lower().endswith(EXPORT_SUFFIX)


def open_export(path: str | Path, mode: Mode = Mode.TEST) -> DADB:
    """The DADB export at `path`, loaded into an in-memory DADB in test mode (frozen: nothing is written,
    to the file least of all).

    Raises:
        DADBMissingError: No file there.
        DADBError: Training mode (an export cannot learn: train into a SQLite file or a PostgreSQL URL), or
            a file that is not a DADB export.
    """
    source = Path(path).expanduser()
    if mode != Mode.TEST:
        raise DADBError(f"{source}: a DADB export ({EXPORT_SUFFIX}) is read-only; a training run writes a SQLite "
                        "file or a postgresql:// URL (reso eval --mode train --db FILE.sqlite)")
    if not source.is_file():
        raise DADBMissingError(str(source))
    dadb = DADB(None, mode=Mode.TEST)
    try:
        dadb.import_json(source)
    except (ValueError, OSError) as error:
        dadb.close()
        raise DADBError(f"cannot read as a DADB export: {error}") from None
    return dadb


def open_dadb(url_or_path: str | Path | None, mode: Mode = Mode.TRAIN) -> AgentDatabase:
    """The DADB at `url_or_path` in `mode`, created when missing in train mode only.

    Raises:
        DADBMissingError: Test mode, and no DADB there (a missing file; a database without the DADB's tables).
        DADBError: The database cannot be opened or reached, or psycopg is not installed for a URL; a DADB
            export in training mode.
    """
    if is_postgres_url(url_or_path):
        try:
            from reso.agents.dadb.postgres import PostgresDADB
        except ImportError:
            raise DADBError("a postgresql:// DADB needs psycopg: pip install 'reso-langgraph[postgres]'") from None
        return PostgresDADB(str(url_or_path), mode=mode, create=mode == Mode.TRAIN)
    if is_export(url_or_path):
        assert url_or_path is not None
        return open_export(url_or_path, mode)
    return DADB(url_or_path or None, mode=mode, create=mode == Mode.TRAIN)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_default_pool(pool: str | Path | None) -> bool:
    """Whether `pool` (a pool setting: '' or a YAML path) is the default pool: none named, or a file with the
    default pool file's bytes (the packaged file itself, or a copy of it)."""
    from reso.agents.defaults import default_pool_path

    if not pool:
        return True
    path = Path(pool).expanduser()
    default = default_pool_path()
    try:
        return path.resolve() == default.resolve() or (path.is_file() and file_sha256(path) == file_sha256(default))
    except OSError:
        return False


def default_db(db: str | None, pool: str | Path | None, mode: Mode | str) -> str:
    """The DADB a run opens: `db` when named; else, for a test run on the default pool, the trained DADB
    shipped with the package (when installed); else '' (an empty in-memory DADB)."""
    if db:
        return db
    from reso.agents.defaults import default_dadb_path

    shipped = default_dadb_path()
    if Mode(mode) == Mode.TEST and shipped.is_file() and is_default_pool(pool):
        return str(shipped)
    return ""
