"""Token authentication of the Ray instances started here, without starting one: the environment a node or a
driver gets, `use_token` restoring this process's, why a node did not come up (never an empty reason), and the
line a driver refused for its token gets. On real clusters: tests/integration_tests/test_ray_backend.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reso.evals.backends.ray_auth import (
    MODE_VAR,
    TOKEN_PATH_VAR,
    TOKEN_VAR,
    new_token,
    token_environment,
    use_token,
)
from reso.evals.backends.ray_backend import _join_error
from reso.evals.backends.ray_cluster import LocalCluster, _not_up

REFUSED = ("ray.exceptions.AuthenticationError: RPC error: InvalidAuthToken: Authentication token is missing or "
           "incorrect. Note: RAY_AUTH_MODE is currently 'disabled' (not 'token').")


def test_a_node_gets_token_mode_and_its_clusters_token_and_no_token_file() -> None:
    base = {"PATH": "/bin", TOKEN_PATH_VAR: "/home/someone/.ray/auth_token", MODE_VAR: "disabled"}
    assert token_environment("t0k3n", base) == {"PATH": "/bin", MODE_VAR: "token", TOKEN_VAR: "t0k3n"}


def test_each_cluster_has_a_token_of_its_own_kept_out_of_its_repr(tmp_path: Path) -> None:
    first, second = LocalCluster("127.0.0.1:1", tmp_path), LocalCluster("127.0.0.1:2", tmp_path)
    assert len(first.token) == 64 and int(first.token, 16) >= 0  # 256 bits, in hex
    assert first.token != second.token != new_token()
    assert first.environment()[TOKEN_VAR] == first.token and first.environment()[MODE_VAR] == "token"
    assert first.token not in repr(first)


def test_use_token_sets_the_token_for_its_block_and_restores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")
    monkeypatch.setenv(MODE_VAR, "disabled")
    monkeypatch.setenv(TOKEN_PATH_VAR, "/elsewhere/auth_token")
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    from ray._raylet import AuthenticationMode, get_authentication_mode  # type: ignore[attr-defined]

    with use_token("t0k3n"):
        assert (os.environ[MODE_VAR], os.environ[TOKEN_VAR], TOKEN_PATH_VAR in os.environ) == ("token", "t0k3n", False)
        assert get_authentication_mode() == AuthenticationMode.TOKEN  # Ray's cached view follows
    assert (os.environ[MODE_VAR], os.environ[TOKEN_PATH_VAR], TOKEN_VAR in os.environ) == (
        "disabled", "/elsewhere/auth_token", False)
    assert get_authentication_mode() != AuthenticationMode.TOKEN
    with use_token(None):
        assert os.environ[MODE_VAR] == "disabled"


def test_a_node_refused_for_its_token_says_so_first(tmp_path: Path) -> None:
    (tmp_path / "ray-start.log").write_text("Local node IP: 10.0.0.2\nTraceback (most recent call last):\n"
                                            "  File \"node.py\", line 996, in _init_gcs_client\n"
                                            "RuntimeError: Failed to connect to GCS. Last connection error:\n"
                                            f"{REFUSED}\n\n", encoding="utf-8")
    reason = _not_up(1, 1, 120, tmp_path)
    assert reason.splitlines()[0] == f"ray start (node 1) did not come up (exited with code 1): {REFUSED}"
    assert reason.splitlines()[1] == "last lines of its output:"
    assert reason.endswith(REFUSED)


def test_a_silent_node_is_explained_by_its_processes_logs_or_said_to_be_silent(tmp_path: Path) -> None:
    (tmp_path / "ray-start.log").write_text("", encoding="utf-8")
    assert _not_up(1, None, 60, tmp_path) == ("ray start (node 1) did not come up (not started after 60 s): it "
                                              "printed nothing and its processes logged no error")
    logs = tmp_path / "session_1" / "logs"
    logs.mkdir(parents=True)
    (logs / "raylet.err").write_text("starting\nFATAL: cannot bind 127.0.0.1:6380\n", encoding="utf-8")
    reason = _not_up(1, None, 60, tmp_path)
    assert reason.splitlines()[:2] == ["ray start (node 1) did not come up (not started after 60 s): FATAL: cannot "
                                       "bind 127.0.0.1:6380", "last lines of session_1/logs/raylet.err:"]


def test_a_driver_refused_for_its_token_is_told_what_to_set() -> None:
    try:
        try:
            raise RuntimeError(f"Failed to connect to GCS. Last connection error: Traceback …\n{REFUSED}")
        except RuntimeError as cause:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.2:6379") from cause
    except ConnectionError as error:
        line = _join_error(error)
    assert line == ("Failed to connect to Ray cluster at 10.0.0.2:6379: the cluster refused this driver's token "
                    f"(set {MODE_VAR}=token and the cluster's token in {TOKEN_VAR}, {TOKEN_PATH_VAR} or "
                    "~/.ray/auth_token, as on its nodes)")
    assert _join_error(ConnectionError("Failed to connect to Ray cluster at x:1")) == (
        "Failed to connect to Ray cluster at x:1")
