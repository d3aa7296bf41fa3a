"""A response cache file shared by runs started together: losing the table-creation race is not an error."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from reso.agents.adapters.cache import _open_sqlite_cache


class _RacingCache:
    """Fails like SQLAlchemy does for the run that loses the race, the first time only."""

    attempts = 0

    def __init__(self, database_path: str) -> None:
        type(self).attempts += 1
        if type(self).attempts == 1:
            raise OperationalError("CREATE TABLE full_llm_cache", {}, Exception("table full_llm_cache already exists"))
        self.database_path = database_path


def test_a_run_that_loses_the_table_creation_race_opens_the_cache(tmp_path):
    cache = _open_sqlite_cache(_RacingCache, tmp_path / "responses.sqlite")
    assert cache.database_path == str(tmp_path / "responses.sqlite") and _RacingCache.attempts == 2


def test_other_operational_errors_still_raise(tmp_path):
    class Broken:
        def __init__(self, database_path: str) -> None:
            raise OperationalError("PRAGMA", {}, Exception("disk I/O error"))

    with pytest.raises(OperationalError, match="disk I/O"):
        _open_sqlite_cache(Broken, tmp_path / "responses.sqlite")
