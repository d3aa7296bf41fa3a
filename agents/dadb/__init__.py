"""The Dynamic Agent Database (DADB): every agent's reward and cost statistics, per subtask domain.

`AgentDatabase` (`base.py`) is the contract, with `AgentStats` (`stats.py`) as one agent's row; `DADB`
stores it in a SQLite file (`sqlite.py`) and `PostgresDADB` on a PostgreSQL server (`postgres.py`).
`open_dadb` (`open.py`) opens whichever a `--db` value names, and `url.py` tells PostgreSQL URLs from
file paths and hides their passwords.

Public names are imported on first use, so importing the package loads no database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.agents.dadb.base import AgentDatabase, DADBError, DADBMissingError
    from reso.agents.dadb.open import DB_URL_ENV, open_dadb
    from reso.agents.dadb.postgres import PostgresDADB
    from reso.agents.dadb.sqlite import DADB
    from reso.agents.dadb.stats import AgentStats
    from reso.agents.dadb.url import is_postgres_url, redact, redact_url

__all__ = [
    "AgentDatabase",
    "AgentStats",
    "DADB",
    "DADBError",
    "DADBMissingError",
    "DB_URL_ENV",
    "PostgresDADB",
    "is_postgres_url",
    "open_dadb",
    "redact",
    "redact_url",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "base": ["AgentDatabase", "DADBError", "DADBMissingError"],
    "open": ["DB_URL_ENV", "open_dadb"],
    "postgres": ["PostgresDADB"],
    "sqlite": ["DADB"],
    "stats": ["AgentStats"],
    "url": ["is_postgres_url", "redact", "redact_url"],
})
