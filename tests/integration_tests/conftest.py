"""Fixtures shared by the integration tests: a `langgraph dev` server on the loopback interface."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of `langgraph dev` serving the exported graph offline (started once per test session)."""
    port = _free_port()
    cli = Path(sys.executable).with_name("langgraph")
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    # The server's log goes to a file: a pipe nobody reads fills up under load and blocks the server.
    log_path = tmp_path_factory.mktemp("langgraph") / "server.log"
    log = log_path.open("w", encoding="utf-8")
    process = subprocess.Popen(
        [str(cli), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload",
         "--config", str(ROOT / "langgraph.json")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"langgraph dev exited early:\n{log_path.read_text(encoding='utf-8')[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("langgraph dev did not answer /ok within 180 s")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
