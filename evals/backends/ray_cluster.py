"""A Ray cluster of several nodes on this machine, as `ray start` makes one across machines: for `reso bench
scale` and the Ray tests.

Each node is one `ray start --block` process (the head first, then `ray start --address` for the others), in
a temporary folder of its own, on ports chosen free, and in its own process group. `--block` keeps the
command running for as long as its node, and ending it (SIGTERM) stops every process of that node, so
`LocalCluster.stop` ends exactly what it started (no `ray stop`, which would stop every Ray node on the
machine, other people's included).

The cluster has a token of its own (`ray_auth.py`): every node gets it in its environment, and a driver
connects inside `use_token(cluster.token)` (or, in another process, with `cluster.environment()`), so it
works whether or not token authentication is on by default and whatever token file the machine holds.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reso.evals.backends.ray_auth import new_token, token_environment

__all__ = ["LocalCluster", "start_local_cluster", "wait_for_nodes"]

STARTED = "Ray runtime started"
"""What `ray start` prints once its node is up."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_command() -> str:
    beside = Path(sys.executable).with_name("ray")
    found = str(beside) if beside.is_file() else shutil.which("ray")
    if found is None:
        raise RuntimeError("no `ray` command: pip install 'reso-langgraph[ray]'")
    return found


@dataclass
class LocalCluster:
    """Nodes started by `start_local_cluster`; `address` is the head's, for `ray.init(address=...)` inside
    `use_token(token)`."""

    address: str
    root: Path
    token: str = field(default_factory=new_token, repr=False)
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def environment(self) -> dict[str, str]:
        """This process's environment with the cluster's token: for a node, or a driver in another process."""
        return token_environment(self.token) | {"RAY_USAGE_STATS_ENABLED": "0"}

    def stop(self, timeout_s: float = 30.0) -> None:
        """End every node (the last started first) and remove the cluster's folder."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for process in reversed(self.processes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            # Whatever of that node outlived its `ray start` (its process group is ours alone).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        self.processes.clear()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _start_node(cluster: LocalCluster, index: int, arguments: list[str], timeout_s: float) -> None:
    folder = cluster.root / f"n{index}"
    folder.mkdir()
    log = folder / "ray-start.log"
    ports = {"--ray-client-server-port": _free_port(), "--dashboard-agent-listen-port": _free_port(),
             "--dashboard-agent-grpc-port": _free_port(), "--metrics-export-port": _free_port(),
             "--runtime-env-agent-port": _free_port(), "--node-manager-port": _free_port(),
             "--object-manager-port": _free_port()}
    command = [_ray_command(), "start", "--block", f"--temp-dir={folder}", "--disable-usage-stats", *arguments,
               *(f"{option}={port}" for option, port in ports.items())]
    with log.open("wb") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=cluster.environment(),
                                   start_new_session=True)
    cluster.processes.append(process)
    deadline = time.monotonic() + timeout_s
    while STARTED not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(_not_up(index, process.poll(), timeout_s, folder))
        time.sleep(0.2)


_ERROR_LINE = re.compile(r"^\s*(?:[\w.]+(?:Error|Exception)|Error|error|ERROR|FATAL|F\d{4})\b.*\S", re.MULTILINE)
"""A line naming what failed: a Python exception (`ray.exceptions.AuthenticationError: …`), or an error line of
a log (`ERROR …`, glog's `F0101 …`)."""


def _not_up(index: int, returncode: int | None, timeout_s: float, folder: Path, tail_chars: int = 1500) -> str:
    """Why node `index` is not up, in words: how it ended, the last error line its output or its logs give
    (the cause, first), and the tail of that output."""
    how = f"exited with code {returncode}" if returncode is not None else f"not started after {timeout_s:g} s"
    text = (folder / "ray-start.log").read_text(errors="replace").strip()
    source = "its output"
    if not text:  # `ray start` said nothing: what its node's processes logged, newest last
        logs = sorted(folder.glob("session_*/logs/*.err"), key=lambda path: path.stat().st_mtime)
        texts = [(path, path.read_text(errors="replace").strip()) for path in logs]
        texts = [(path, body) for path, body in texts if body]
        if texts:
            source, text = str(texts[-1][0].relative_to(folder)), texts[-1][1]
    if not text:
        return f"ray start (node {index}) did not come up ({how}): it printed nothing and its processes logged no error"
    causes = _ERROR_LINE.findall(text)
    cause = causes[-1].strip() if causes else text.splitlines()[-1].strip()
    return f"ray start (node {index}) did not come up ({how}): {cause}\nlast lines of {source}:\n{text[-tail_chars:]}"


def start_local_cluster(nodes: int = 2, cpus_per_node: int = 2, *, timeout_s: float = 120.0) -> LocalCluster:
    """Start a head and `nodes - 1` more nodes on this machine, each offering `cpus_per_node` logical CPUs.

    Raises:
        RuntimeError: `ray` is not installed, or a node did not start within `timeout_s` (every node started
            so far is stopped again).
    """
    if nodes < 1:
        raise ValueError(f"nodes must be at least 1, got {nodes}")
    port = _free_port()
    cluster = LocalCluster(address=f"127.0.0.1:{port}", root=Path(tempfile.mkdtemp(prefix="reso-ray-")))
    cpus = f"--num-cpus={cpus_per_node}"
    try:
        _start_node(cluster, 0, ["--head", f"--port={port}", "--include-dashboard=false",
                                 f"--dashboard-port={_free_port()}", cpus], timeout_s)
        for index in range(1, nodes):
            _start_node(cluster, index, [f"--address={cluster.address}", cpus], timeout_s)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def wait_for_nodes(ray: Any, nodes: int, timeout_s: float = 60.0) -> None:
    """Wait until the connected cluster has `nodes` live nodes."""
    deadline = time.monotonic() + timeout_s
    while sum(1 for node in ray.nodes() if node.get("Alive")) < nodes:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the Ray cluster has fewer than {nodes} live nodes after {timeout_s:g} s")
        time.sleep(0.2)
