"""A persistent response cache, so that an identical rerun is served without calling any model.

It is LangChain's own LLM cache (`langchain_community.cache.SQLiteCache`, installed process-wide with
`set_llm_cache`): every chat model that leaves its `cache` field at the default consults it. The key is
the exact message list plus the model's identifying parameters (model name, temperature, endpoint; never
the API key, which LangChain serialises as a secret reference). A cached reply keeps its original
`usage_metadata`, so a rerun reports the same tokens and cost as the run it repeats.

Models built with `cache=False` bypass it: use that for samplers whose repeated calls must differ.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from langchain_core.caches import BaseCache
from langchain_core.globals import get_llm_cache, set_llm_cache


class ResponseCacheError(ValueError):
    """The response cache file cannot be opened (not SQLite); the message names the file."""


def enable_response_cache(path: str | Path) -> BaseCache:
    """Serve repeated identical chat-model calls from an SQLite file (created when missing).

    Args:
        path: The cache database file; its folder is created if needed.

    Returns:
        The installed cache (also available from `langchain_core.globals.get_llm_cache()`).

    Raises:
        ResponseCacheError: The file exists but is not an SQLite database, or cannot be made (a file where a
            folder above it should be).
    """
    from langchain_community.cache import SQLiteCache
    from sqlalchemy.exc import DatabaseError

    target = Path(path).expanduser().resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file where a folder above it should be
        raise ResponseCacheError(f"{target}: cannot use as a response cache: {error}") from None
    try:
        cache = _open_sqlite_cache(SQLiteCache, target)
    except DatabaseError as error:  # a file that is not SQLite
        raise ResponseCacheError(f"{target}: cannot use as a response cache: {error.orig or error}") from None
    _quiet_cache_reads()
    set_llm_cache(cache)
    return cache


def _quiet_cache_reads() -> None:
    """Silence the pending-deprecation warning SQLiteCache's lookup raises on every hit.

    The cache calls `langchain_core.load.loads` without `allowed_objects`, which warns once per cache hit
    (a rerun printed a screenful); the lookup offers no way to pass it. The file holds only what this
    project wrote. If LangChain's default ever stops reviving the cached generations, the cache tests in
    tests/unit_tests/test_invoke.py fail (a hit must return the original text and token counts).
    """
    warnings.filterwarnings("ignore", message="The default value of `allowed_objects`",
                            module=r"langchain_community\.cache")


def _open_sqlite_cache(cache_class: type, target: Path) -> BaseCache:
    from sqlalchemy.exc import OperationalError

    try:
        return cache_class(database_path=str(target))
    except OperationalError as error:
        # Runs of one sweep started together share the file: SQLAlchemy checks for the table, then creates
        # it, and a run that lost that race sees "already exists"; by now the table is there.
        if "already exists" not in str(error):
            raise
        return cache_class(database_path=str(target))


def disable_response_cache() -> None:
    """Stop serving calls from the process-wide response cache."""
    set_llm_cache(None)


def response_cache() -> BaseCache | None:
    """The process-wide response cache in use, if any."""
    return get_llm_cache()
