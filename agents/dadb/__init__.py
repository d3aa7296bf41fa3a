"""The Dynamic Agent Database (DADB): every agent's reward and cost statistics, per subtask domain.

`AgentDatabase` (`base.py`) is the contract, with `AgentStats` (`stats.py`) as one agent's row; `DADB`
stores it in a SQLite file (`sqlite.py`) and `PostgresDADB` on a PostgreSQL server (`postgres.py`).
`open_dadb` (`open.py`) opens whichever a `--db` value names, and `url.py` tells PostgreSQL URLs from
file paths and hides their passwords.

Public names are imported on first use, so importing the package loads no database driver.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.agents.dadb.base import AgentDatabase, DADBError
    from reso.agents.dadb.open import DB_URL_ENV, open_dadb
    from reso.agents.dadb.postgres import PostgresDADB
    from reso.agents.dadb.sqlite import DADB
    from reso.agents.dadb.stats import AgentStats
    from reso.agents.dadb.url import is_postgres_url, redact, redact_url

_EXPORTS: dict[str, str] = {
    "AgentDatabase": "reso.agents.dadb.base",
    "DADBError": "reso.agents.dadb.base",
    "DB_URL_ENV": "reso.agents.dadb.open",
    "open_dadb": "reso.agents.dadb.open",
    "PostgresDADB": "reso.agents.dadb.postgres",
    "DADB": "reso.agents.dadb.sqlite",
    "AgentStats": "reso.agents.dadb.stats",
    "is_postgres_url": "reso.agents.dadb.url",
    "redact": "reso.agents.dadb.url",
    "redact_url": "reso.agents.dadb.url",
}

__all__ = [
    "AgentDatabase",
    "AgentStats",
    "DADB",
    "DADBError",
    "DB_URL_ENV",
    "PostgresDADB",
    "is_postgres_url",
    "open_dadb",
    "redact",
    "redact_url",
]


def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562), so importing the package loads none of its heavy dependencies.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
