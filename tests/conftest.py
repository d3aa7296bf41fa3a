"""Shared test fixtures: where the read-only shared data lives; the DADB's backends (SQLite, and PostgreSQL
on a throwaway server started once per session). Where the shared data or the server is missing, the tests
that need them skip, and fail under CI (`tests/resources.py`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

# Code that a checkpoint ships (trust_remote_code: the remote-code PRM layout, tests/tiny_models.py) is copied by
# transformers into HF_MODULES_CACHE, by default ~/.cache/huggingface/modules: a folder per test checkpoint
# would stay behind in the user's cache. The tests use a folder of their own, removed when the session ends.
# Set before transformers is first imported (it reads the variable then); subprocesses inherit it.
HF_MODULES = tempfile.mkdtemp(prefix="reso-tests-hf-modules-")
os.environ["HF_MODULES_CACHE"] = HF_MODULES

import pytest

from reso.agents.dadb.base import AgentDatabase, Mode
from tests.postgres_server import PostgresServer, server_bindir, start_server, unavailable_reason
from tests.resources import require_module, unavailable

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The project's read-only shared data folder (`../shared/data`); `unavailable` when absent."""
    if not SHARED_DATA.is_dir():
        unavailable(f"shared data folder not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL server for the whole session (unix socket only); `unavailable` where none is
    installed."""
    require_module("psycopg", "psycopg is not installed (pip install -e '.[postgres]')")
    reason = unavailable_reason()
    if reason is not None:
        unavailable(reason)
    server = start_server(server_bindir())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new empty database on the session's server (superuser, no password)."""
    return postgres_server.url(postgres_server.create_database())


class DADBStore:
    """Where a test's DADBs live, for one backend: `target(name)` is the same store for the same name."""

    def __init__(self, backend: str, tmp_path: Path, server: PostgresServer | None) -> None:
        self.backend, self._tmp_path, self._server = backend, tmp_path, server
        self._targets: dict[str, str] = {}

    def target(self, name: str) -> str:
        """A SQLite file path or a PostgreSQL URL, new for each new name."""
        if name not in self._targets:
            if self._server is None:
                self._targets[name] = str(self._tmp_path / f"{name}.sqlite")
            else:
                self._targets[name] = self._server.url(self._server.create_database())
        return self._targets[name]

    def open(self, name: str | None = None, mode: Mode = "train") -> AgentDatabase:
        """The DADB called `name` (None: a new private one, like `DADB()` in memory)."""
        from reso.agents.dadb.open import open_dadb

        if name is None and self._server is None:
            return open_dadb(None, mode=mode)
        return open_dadb(self.target(name or f"anonymous-{len(self._targets)}"), mode=mode)


@pytest.fixture(params=["sqlite", "postgres"])
def dadb_store(request: pytest.FixtureRequest, tmp_path: Path) -> DADBStore:
    """The DADB guarantees' tests run once per implementation: SQLite, then PostgreSQL."""
    server = request.getfixturevalue("postgres_server") if request.param == "postgres" else None
    return DADBStore(request.param, tmp_path, server)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the session's HF_MODULES_CACHE (see HF_MODULES above)."""
    shutil.rmtree(HF_MODULES, ignore_errors=True)
