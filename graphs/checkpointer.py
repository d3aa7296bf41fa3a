"""Where a checkpointed run's state lives: a SQLite file, or a PostgreSQL database named by URL.

`open_checkpointer(location)` is what the Python API compiles its graph with: LangGraph's
`AsyncSqliteSaver` for a path, `AsyncPostgresSaver` (langgraph-checkpoint-postgres, from the `postgres`
extra) for a `postgresql://` URL, so a paused or crashed run resumes from any machine that reaches the
server. `checkpoint_key(location)` names the store in the DADB's exactly-once keys: the resolved file, or
the URL without user and password (the same for every machine that names the server the same way).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from reso.agents.dadb.url import is_postgres_url, redact_url, scrub, without_credentials

CheckpointLocation = Path | str
# Concurrent first runs would otherwise race through the saver's schema migrations.
_SETUP_LOCK = "SELECT pg_advisory_lock(hashtext('reso-checkpoint-setup'))"
_SETUP_UNLOCK = "SELECT pg_advisory_unlock(hashtext('reso-checkpoint-setup'))"


class CheckpointError(ValueError):
    """The checkpoint store cannot be opened (unreachable server, missing driver); names it, redacted."""


def checkpoint_location(value: str | Path | None) -> CheckpointLocation | None:
    """A PostgreSQL URL as given, a file path as a `Path`, or None for no checkpoints."""
    if not value:
        return None
    return str(value) if is_postgres_url(value) else Path(value)


def checkpoint_key(location: CheckpointLocation) -> str:
    """The store's name in exactly-once keys (never its password)."""
    if isinstance(location, Path):
        return str(location.resolve())
    return "postgresql://" + without_credentials(location).split("://", 1)[1]  # postgres:// is the same server


@contextlib.asynccontextmanager
async def open_checkpointer(location: CheckpointLocation, *, serde: Any = None) -> AsyncIterator[Any]:
    """The LangGraph checkpoint saver for `location`, open for the duration of the block; `serde` is its
    serializer (None: LangGraph's default).

    Raises:
        CheckpointError: The PostgreSQL server cannot be reached or set up, or its driver is not installed.
    """
    if isinstance(location, Path):
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        location.parent.mkdir(parents=True, exist_ok=True)
        # What `AsyncSqliteSaver.from_conn_string` does, which takes no serializer.
        async with aiosqlite.connect(str(location)) as conn:
            yield AsyncSqliteSaver(conn, serde=serde)
        return
    try:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError:
        raise CheckpointError("postgresql:// checkpoints need langgraph-checkpoint-postgres: "
                              "pip install 'reso-langgraph[postgres]'") from None
    async with contextlib.AsyncExitStack() as stack:
        try:
            saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(location, serde=serde))
            # from_conn_string opens one connection, never a pool: the advisory lock holds per session.
            session = saver.conn
            assert isinstance(session, psycopg.AsyncConnection)
            await session.execute(_SETUP_LOCK)
            try:
                await saver.setup()
            finally:
                await session.execute(_SETUP_UNLOCK)
        except psycopg.Error as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise CheckpointError(f"{redact_url(location)}: cannot open the checkpoint database: "
                                  f"{scrub(first, location)}") from None
        yield saver
