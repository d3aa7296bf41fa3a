"""A server process for integration tests: started on a free loopback port, waited for until it answers,
stopped afterwards (used for `langgraph dev` and llama-cpp-python's OpenAI-compatible server)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(command: Sequence[str], *, log_path: Path, ready_url: str, what: str, within_s: float,
            poll_s: float = 0.5, **popen: Any) -> Iterator[None]:
    """Run `command` until the block ends; enter once `ready_url` answers 200 (fail the test after
    `within_s`, or at once if the process exits, with the end of its log)."""
    # The log goes to a file: a pipe nobody reads fills up under load and blocks the server.
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(list(command), stdout=log, stderr=subprocess.STDOUT, text=True, **popen)
        try:
            deadline = time.monotonic() + within_s
            while time.monotonic() < deadline:
                if process.poll() is not None:
                    pytest.fail(f"{what} exited early:\n{log_path.read_text(encoding='utf-8')[-3000:]}")
                try:
                    with urllib.request.urlopen(ready_url, timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    time.sleep(poll_s)
            else:
                pytest.fail(f"{what} did not answer {ready_url} within {within_s:.0f} s")
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
