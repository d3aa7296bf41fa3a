"""Unit tests run offline: every network socket is refused (unix sockets stay allowed for asyncio). Each
test starts without a process-wide response cache, whatever the test before it left installed."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from pytest_socket import disable_socket


def pytest_runtest_setup(item: pytest.Item) -> None:
    disable_socket(allow_unix_socket=True)


@pytest.fixture(autouse=True)
def _no_response_cache_left_behind() -> Iterator[None]:
    # An in-process `reso eval` installs a process-wide response cache (even one it then refuses to run);
    # left installed, it would serve a later test's calls from an earlier test's file.
    yield
    cache = sys.modules.get("reso.agents.adapters.cache")  # never imported: nothing can have been installed
    if cache is not None:
        cache.disable_response_cache()
