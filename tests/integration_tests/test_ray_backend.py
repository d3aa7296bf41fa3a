"""The Ray backend on a two-node Ray cluster on this machine (two `ray start` nodes, started once for the module
and stopped after) with a real PostgreSQL DADB: training with four workers learns every recorded call
once, a worker killed mid-run loses no item, a second run into a folder being written is refused, a
run budget holds across workers, and a driver (`reso eval --set backend.kind=ray --set backend.address=…`)
killed mid-run resumes when its command is run again.

The workers' teams are `reso bench scale`'s fake agents of fixed latency (`LatencyTeam`), learning into the
DADB the settings name.

Token authentication is on for every cluster here, with the cluster's own token, while HOME holds a stray
`~/.ray/auth_token` (a temporary HOME: what one local `ray.init()` leaves behind, which used to make the
second node refused): `reso bench scale` and the two-node cluster work, a driver without the cluster's token
is refused with the cause named, and `reso eval --set backend.kind=ray` without `backend.address` writes no
token file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install -e '.[ray]')")

from reso.agents.dadb.open import open_dadb
from reso.evals.backends.ray_auth import MODE_VAR, TOKEN_PATH_VAR, TOKEN_VAR, new_token, use_token
from reso.evals.backends.ray_backend import RayBackend
from reso.evals.backends.ray_cluster import LocalCluster, start_local_cluster, wait_for_nodes
from reso.evals.bench.eval import CALCULATOR, bench_problems
from reso.evals.bench.scale import LatencyTeam, bench_settings
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import parse_method
from reso.evals.results import ResultsBusyError
from reso.evals.runner import run_eval
from tests.integration_tests.test_crash_resume import DATASET, RESO, ROOT, _env, _kill_after_lines

pytestmark = pytest.mark.integration

NODES = 2


@pytest.fixture(scope="module")
def stray_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """HOME, for this module, is a temporary folder whose `.ray/auth_token` holds a token no cluster here uses."""
    home = tmp_path_factory.mktemp("home")
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(new_token(), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        for name in (MODE_VAR, TOKEN_VAR, TOKEN_PATH_VAR):
            patch.delenv(name, raising=False)
        yield home


@pytest.fixture(scope="module")
def cluster(stray_home: Path) -> Iterator[LocalCluster]:
    """A two-node Ray cluster on this machine, this test process connected to it with the cluster's token (so
    the drivers it starts have it too)."""
    with start_local_cluster(NODES, cpus_per_node=2) as local, use_token(local.token):
        try:
            ray.init(address=local.address, log_to_driver=False, logging_level=logging.WARNING)
            wait_for_nodes(ray, NODES)
            yield local
        finally:
            ray.shutdown()


def test_reso_bench_scale_runs_beside_a_stray_token_file(stray_home: Path) -> None:
    """The issue's failure: with ~/.ray/auth_token present, the second node was refused. First in the module,
    so that no other cluster runs beside this one."""
    stray = (stray_home / ".ray" / "auth_token").read_text(encoding="utf-8")
    command = [RESO, "bench", "scale", "--workers", "2", "--questions", "8", "--latency-ms", "50",
               "--concurrency", "2", "--json"]
    finished = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    report = json.loads(finished.stdout[finished.stdout.index("{"):])
    assert report["nodes"] == NODES
    assert [(row["workers"], row["nodes_used"], row["failed_items"]) for row in report["rows"]] == [(2, NODES, 0)]
    assert (stray_home / ".ray" / "auth_token").read_text(encoding="utf-8") == stray  # untouched


def test_a_local_instance_uses_a_token_of_its_own_and_writes_none(tmp_path: Path) -> None:
    """`reso eval --set backend.kind=ray` without `backend.address`, in a HOME with no token: Ray would write
    one to ~/.ray/auth_token (the file that broke the cluster); with a token of its own nothing is written
    there."""
    home = tmp_path / "home"
    home.mkdir()
    env = {name: value for name, value in _env().items() if name not in (MODE_VAR, TOKEN_VAR, TOKEN_PATH_VAR)}
    command = [RESO, "eval", "--dataset", DATASET, "--limit", "2", "--out", str(tmp_path / "run"), "--quiet",
               "--set", "selection.embedder=hash:64", "--set", "backend.kind=ray",
               "--set", "backend.workers=1"]
    finished = subprocess.run(command, cwd=ROOT, env=env | {"HOME": str(home)}, capture_output=True, text=True,
                              timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert json.loads(finished.stdout)["n"] == 2
    assert not (home / ".ray" / "auth_token").exists()


def test_a_driver_without_the_clusters_token_is_refused_with_the_cause_named(cluster: LocalCluster,
                                                                             tmp_path: Path) -> None:
    """Token authentication is on: a driver holding another token (the stray file) is refused in one line that
    says what to set, and the cluster's token is in no output."""
    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"id": "a", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    env = {name: value for name, value in _env().items() if name not in (TOKEN_VAR, TOKEN_PATH_VAR)}
    env["RAY_gcs_server_port_wait_time_s"] = "3"  # Ray's retries of a refused connection: 3 s, not 20
    command = [RESO, "eval", "--dataset", str(dataset), "--out", str(tmp_path / "run"), "--quiet",
               "--set", "selection.embedder=hash:64", "--set", "backend.kind=ray",
               "--set", f"backend.address={cluster.address}"]
    finished = subprocess.run(command, cwd=ROOT, env=env | {MODE_VAR: "token"}, capture_output=True, text=True,
                              timeout=180)
    assert finished.returncode == 2
    line = finished.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: backend.address {cluster.address}: cannot join a Ray cluster there: "
                           "Failed to connect to Ray cluster at ")  # at the head's address as Ray resolved it
    assert line.endswith(f": the cluster refused this driver's token (set {MODE_VAR}=token and the cluster's "
                         f"token in {TOKEN_VAR}, {TOKEN_PATH_VAR} or ~/.ray/auth_token, as on its nodes)")
    assert cluster.token not in finished.stdout + finished.stderr
    assert not (tmp_path / "run" / "results.jsonl").exists()


def _config(out: Path, settings: Any, team: Any, concurrency: int, **budget: Any) -> EvalConfig:
    return EvalConfig(dataset="ray-test", method=parse_method("reso", team.pool), out=out, settings=settings,
                      command=["pytest"], run=RunOptions(concurrency=concurrency, **budget))


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def _recorded_updates(out: Path) -> int:
    return sum(len(row["dadb_updates"]) for row in _rows(out))


def test_training_with_four_workers_learns_every_recorded_call_once(cluster: LocalCluster, postgres_server: Any,
                                                                    tmp_path: Path) -> None:
    """Also: the DADB URL's password, which every worker needs, is in no file the run or Ray wrote."""
    role, password = "reso_ray", "pw-canary-ray-5d4c3b2a"
    postgres_server.admin(f"DROP ROLE IF EXISTS {role}", f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    postgres_url = postgres_server.url(postgres_server.create_database(owner=role), user=role, password=password)
    factory = LatencyTeam(latency_s=0.05)
    settings = bench_settings(mode="train", db=postgres_url)
    team = factory(settings)
    problems = bench_problems(24)
    with RayBackend(workers=4, team_factory=factory) as backend:
        summary = asyncio.run(run_eval(_config(tmp_path, settings, team, 8), problems, team, backend=backend))
    run = backend.runs[-1]
    assert len(run.pids) == 4 and len(set(run.nodes)) == NODES  # four workers, spread over both nodes
    assert summary["n"] == 24 and summary["failed_items"] == 0
    with open_dadb(postgres_url) as dadb:
        assert dadb.total_visits() == _recorded_updates(tmp_path) > 24
        assert len(dadb.applied_keys()) == 24
    written = [path for root in (tmp_path, cluster.root) for path in root.rglob("*") if path.is_file()]
    assert any("worker" in path.name for path in written)  # Ray's logs of the workers are among them
    assert not [path for path in written if password.encode() in path.read_bytes()]


def test_a_worker_killed_mid_run_loses_no_item_and_learns_nothing_twice(cluster: LocalCluster, postgres_url: str,
                                                                        tmp_path: Path) -> None:
    factory = LatencyTeam(latency_s=0.1)
    settings = bench_settings(mode="train", db=postgres_url)
    team = factory(settings)
    problems = bench_problems(10)
    killed: list[int] = []

    with RayBackend(workers=2, team_factory=factory) as backend:
        def kill_once(row: dict[str, Any]) -> None:
            if not killed:  # after the first result, while both workers hold questions in flight
                killed.append(backend.runs[-1].pids[0])
                os.kill(killed[0], signal.SIGKILL)

        summary = asyncio.run(run_eval(_config(tmp_path, settings, team, 4), problems, team, progress=kill_once,
                                       backend=backend))
    run = backend.runs[-1]
    assert killed and run.restarted == 1 and run.final_pids[0] != killed[0]
    ids = [row["id"] for row in _rows(tmp_path)]
    assert sorted(ids) == sorted(p.id for p in problems)  # every item, each once
    assert summary["n"] == 10 and summary["failed_items"] == 0
    with open_dadb(postgres_url) as dadb:
        assert dadb.total_visits() == _recorded_updates(tmp_path)
        assert len(dadb.applied_keys()) == 10


def test_a_second_run_into_a_folder_being_written_is_refused(cluster: LocalCluster, tmp_path: Path) -> None:
    factory = LatencyTeam(latency_s=0.1)
    settings = bench_settings()
    team = factory(settings)
    problems = bench_problems(12)
    first_row = threading.Event()
    outcome: dict[str, Any] = {}

    def first_run() -> None:
        with RayBackend(workers=1, team_factory=factory) as backend:
            outcome["summary"] = asyncio.run(run_eval(_config(tmp_path, settings, team, 4), problems, team,
                                                      progress=lambda row: first_row.set(), backend=backend))

    thread = threading.Thread(target=first_run)
    thread.start()
    try:
        assert first_row.wait(timeout=120)
        with RayBackend(workers=1, team_factory=factory) as backend, pytest.raises(ResultsBusyError):
            asyncio.run(run_eval(_config(tmp_path, settings, team, 4), problems, team, backend=backend))
    finally:
        thread.join(timeout=120)
    assert outcome["summary"]["n"] == 12
    assert len(_rows(tmp_path)) == 12


def test_a_run_budget_holds_across_workers(cluster: LocalCluster, tmp_path: Path) -> None:
    factory = LatencyTeam(latency_s=0.1)
    settings = bench_settings(k=2)
    team = factory(settings)
    problems = bench_problems(40)
    concurrency, budget = 4, 6000
    with RayBackend(workers=2, team_factory=factory) as backend:
        summary = asyncio.run(run_eval(_config(tmp_path, settings, team, concurrency, budget_tokens=budget),
                                       problems, team, backend=backend))
    rows = _rows(tmp_path)
    per_call = max(sum(model.tokens) for agent_id, model in team.models.items() if agent_id != CALCULATOR)
    assert summary["stopped"] is not None and "token budget" in summary["stopped"]
    assert 0 < len(rows) < len(problems)
    assert sum(row["usage"]["total_tokens"] for row in rows) <= budget
    spent_tokens, _ = backend.runs[-1].spent
    # Past the limit, only the calls already in flight when it was reached: at most k per question in flight.
    assert spent_tokens <= budget + concurrency * settings.asking.k * per_call


def test_eval_refuses_an_address_where_no_cluster_answers_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from reso.evals.cli import app
    from tests.local_server import free_port

    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"id": "a", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    address = f"127.0.0.1:{free_port()}"  # free, so nothing listens there
    result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--out", str(tmp_path / "run"), "--quiet",
                                      "--set", "selection.embedder=hash:64", "--set", "backend.kind=ray",
                                      "--set", f"backend.address={address}"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: backend.address {address}: no Ray cluster answers there "
                                     "(Connection refused); start one with `ray start --head`")
    assert not (tmp_path / "run" / "results.jsonl").exists()


def _idle(ray_module: Any, timeout_s: float = 30.0) -> bool:
    """Whether every logical CPU of the cluster is free again (workers hold one each) within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ray_module.available_resources().get("CPU", 0.0) >= ray_module.cluster_resources().get("CPU", 0.0):
            return True
        time.sleep(0.1)
    return False


def test_a_driver_killed_mid_run_resumes_from_its_results_and_the_dadb(cluster: LocalCluster, postgres_url: str,
                                                                       tmp_path: Path) -> None:
    """`reso eval --set backend.kind=ray --set backend.address=…` SIGKILLed after a few rows, then the same
    command again: every item once, DADB visits equal to the updates the rows record, and the killed driver's
    workers gone with it (they belong to its Ray job, not detached), the cluster itself still up."""
    items, out = 16, tmp_path / "sweep" / "train"
    command = [RESO, "eval", "--mode", "train", "--dataset", DATASET, "--limit", str(items), "--out", str(out),
               "--db", postgres_url, "--quiet", "--set", "selection.embedder=hash:256", "--concurrency", "4",
               "--set", "backend.kind=ray", "--set", f"backend.address={cluster.address}",
               "--set", "backend.workers=2"]
    assert _idle(ray)
    killed_at = _kill_after_lines(command, out / "results.jsonl", 3)
    assert 3 <= killed_at < items, "the kill landed partway"
    assert _idle(ray), "the killed driver's workers outlived it"
    assert sum(1 for node in ray.nodes() if node.get("Alive")) == NODES
    written = (out / "results.jsonl").read_text(encoding="utf-8")
    finished = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=180)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert (out / "results.jsonl").read_text(encoding="utf-8").startswith(written[:written.rfind("\n") + 1])
    rows = _rows(out)
    assert sorted(row["id"] for row in rows) == sorted({row["id"] for row in rows}) and len(rows) == items
    assert json.loads(finished.stdout)["dataset"] == DATASET
    with open_dadb(postgres_url) as dadb:
        assert dadb.total_visits() == _recorded_updates(out) > items
        assert len(dadb.applied_keys()) == items
