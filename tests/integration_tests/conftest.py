"""Fixtures shared by the integration tests: a `langgraph dev` server on the loopback interface."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_server import free_port, serving

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the `server` fixture's `langgraph dev` writes its output (its stdout and stderr)."""
    return tmp_path_factory.mktemp("langgraph") / "server.log"


@pytest.fixture(scope="session")
def server(server_log: Path) -> Iterator[str]:
    """The URL of `langgraph dev` serving the exported graph offline (started once per test session)."""
    port = free_port()
    cli = Path(sys.executable).with_name("langgraph")
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    url = f"http://127.0.0.1:{port}"
    command = [str(cli), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload",
               "--config", str(ROOT / "langgraph.json")]
    with serving(command, log_path=server_log, ready_url=f"{url}/ok",
                 what="langgraph dev", within_s=180, poll_s=1, cwd=ROOT, env=env):
        yield url
