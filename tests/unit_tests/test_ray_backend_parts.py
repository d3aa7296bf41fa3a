"""The Ray backend's parts that need no Ray: the shared run budget and rate limits (their actors run here as
plain objects behind a stand-in handle), the DADB check, error lines, and `reso eval`'s backend options.
The backend on a real Ray cluster is tested in tests/integration_tests/test_ray_backend.py."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from reso.agents.adapters.failures import FailureKind
from reso.agents.adapters.invoke import models_for_pool
from reso.agents.pool import pool_from_dict
from reso.evals.backends.base import BackendSetupError
from reso.evals.backends.open import open_backend
from reso.evals.backends.ray_backend import RayBackend, RaySolver, WorkerRun, _cause_line
from reso.evals.backends.ray_shared import (
    ClusterRateLimiter,
    RateLimits,
    SharedRunBudget,
    SpendLedger,
    share_rate_limits,
)
from reso.evals.bench.dag import bench_pool
from reso.evals.cli import app
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.settings import ReSoSettings


class Handle:
    """A Ray actor handle stand-in: `handle.method.remote(*args)` calls the method of a local object and gives
    an awaitable, as awaiting an ObjectRef does."""

    def __init__(self, instance: Any) -> None:
        self._instance = instance

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._instance, name)

        async def call(*args: Any) -> Any:
            result = method(*args)
            return await result if inspect.isawaitable(result) else result

        return SimpleNamespace(remote=call)


AGENT = next(iter(bench_pool(1)))


def test_a_workers_run_budget_counts_every_workers_calls() -> None:
    async def scenario() -> None:
        ledger = Handle(SpendLedger(tokens=100, usd=0.0, elapsed_s=0.0))  # a resumed run had spent 100
        first = SharedRunBudget(max_tokens=1000, tokens=100, ledger=ledger)
        second = SharedRunBudget(max_tokens=1000, tokens=100, ledger=ledger)
        Budget(parent=first).spend(800, 0.0)  # one call of a question on the first worker
        assert first.tokens == 900  # counted at once, before the ledger answers
        await first.flush()
        assert (first.tokens, second.tokens) == (900, 100)
        await second.refresh()
        assert second.tokens == 900
        # 100 tokens are left for the whole run: a 200-token prompt is refused on the other worker too.
        refusal = Budget(parent=second).refusal(AGENT, "x" * 800)
        assert refusal is not None and refusal.kind is FailureKind.RUN_BUDGET_EXCEEDED
        assert Budget(parent=second).refusal(AGENT, "x" * 200) is None
        second.see((500, 0.0))  # an older answer arriving late never takes the view back
        assert second.tokens == 900

    asyncio.run(scenario())


def test_models_with_a_rate_limit_share_one_bucket_per_model_across_workers() -> None:
    limited = {"spec": "tool:calculator", "params": {"requests_per_second": 1000}}
    pool = pool_from_dict({"name": "limits", "agents": [
        {"id": "a", "model": limited, "role": "Exact arithmetic", "profile": "Calculates."},
        {"id": "b", "model": limited, "role": "Exact arithmetic", "profile": "Calculates too."},
        {"id": "c", "model": {"spec": "tool:calculator", "params": {"requests_per_second": 500}},
         "role": "Exact arithmetic", "profile": "Calculates slowly."},
        {"id": "d", "model": {"spec": "tool:calculator"}, "role": "Exact arithmetic", "profile": "Unlimited."},
    ]})
    models = models_for_pool(pool)
    limits = RateLimits()
    assert share_rate_limits(SimpleNamespace(pool=pool, models=models), Handle(limits)) == 2
    a, b, c = (models[agent].rate_limiter for agent in "abc")
    assert isinstance(a, ClusterRateLimiter) and a is b and isinstance(c, ClusterRateLimiter) and a.key != c.key
    assert c.params == {"requests_per_second": 500.0}
    assert models["d"].rate_limiter is None

    async def take() -> list[bool]:
        return [await a.aacquire(), await b.aacquire(), await c.aacquire()]

    assert asyncio.run(take()) == [True, True, True]
    assert len(limits._buckets) == 2


def _solver(db: str, mode: str = "test") -> RaySolver:
    context = RunContext(settings=ReSoSettings(db=db, mode=mode))
    return RaySolver(RayBackend(workers=2), SimpleNamespace(), context)


def _fake_ray(*addresses: str) -> Any:
    nodes = [{"NodeManagerAddress": address, "Alive": True} for address in addresses]
    return SimpleNamespace(util=SimpleNamespace(get_node_ip_address=lambda: addresses[0]), nodes=lambda: nodes)


def test_a_sqlite_dadb_is_refused_on_a_cluster_with_other_machines() -> None:
    with pytest.raises(BackendSetupError, match=r"--db runs/dadb.sqlite: .*10\.0\.0\.2: use --db postgresql://"):
        _solver("runs/dadb.sqlite")._check_dadb(_fake_ray("10.0.0.1", "10.0.0.2"))
    _solver("runs/dadb.sqlite")._check_dadb(_fake_ray("10.0.0.1", "10.0.0.1"))  # two nodes, one machine
    _solver("postgresql://reso:pw@db/reso", "train")._check_dadb(_fake_ray("10.0.0.1", "10.0.0.2"))
    _solver("")._check_dadb(_fake_ray("10.0.0.1", "10.0.0.2"))  # test mode: nothing to share
    with pytest.raises(BackendSetupError, match="training on Ray workers needs a DADB they share"):
        _solver("", "train")._check_dadb(_fake_ray("10.0.0.1"))


def test_a_workers_error_is_its_last_exception_line_without_passwords() -> None:
    message = ("ActorDiedError: The actor died because of an error raised in its creation task\n"
               "Traceback (most recent call last):\n  File \"x.py\", line 3, in __init__\n"
               "reso.agents.dadb.base.DADBError: cannot reach postgresql://reso:hunter2@db/reso: refused")
    line = _cause_line(RuntimeError(message))
    assert line.startswith("reso.agents.dadb.base.DADBError: cannot reach postgresql://reso:")
    assert "hunter2" not in line and "***" in line


def test_a_worker_run_counts_restarted_workers() -> None:
    assert WorkerRun(pids=[1, 2, 3], final_pids=[1, 7, 3]).restarted == 1
    assert WorkerRun(pids=[1, 2]).restarted == 0


def test_open_backend_local_is_this_process_and_an_unknown_one_is_refused() -> None:
    with open_backend("local") as backend:
        assert backend is None
    with pytest.raises(BackendSetupError, match="backend.kind must be local or ray, got 'spark'"):
        with open_backend("spark"):
            pass


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "backend.kind=spark"], "error: backend.kind must be local or ray, got 'spark'"),
    (["--set", "backend.address=10.0.0.1:6379"], "error: backend.address goes with backend.kind ray"),
])
def test_eval_refuses_bad_backend_options_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"id": "a", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--out", str(out), "--quiet", *args])
    assert result.exit_code == 2
    assert result.stderr.strip() == message and result.stdout == ""
    assert not out.exists()  # refused before anything ran
