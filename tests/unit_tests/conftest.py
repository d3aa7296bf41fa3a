"""Unit tests run offline: every network socket is refused (unix sockets stay allowed for asyncio)."""

from __future__ import annotations

import pytest
from pytest_socket import disable_socket


def pytest_runtest_setup(item: pytest.Item) -> None:
    disable_socket(allow_unix_socket=True)
