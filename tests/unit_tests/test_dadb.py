"""DADB: exact counts under concurrent processes, WAL, frozen test mode (which never creates a DADB),
per-domain rows, JSON round trip.

Every guarantee is checked on both implementations (`dadb_store`: SQLite, then PostgreSQL on the session's
throwaway server); the write-ahead-log checks are SQLite's own.
"""

from __future__ import annotations

import json
import multiprocessing as mp

import pytest

from reso.agents.dadb.base import DADBMissingError
from reso.agents.dadb.open import open_dadb
from reso.agents.dadb.sqlite import DADB, AgentStats


def _hammer(target: str, worker: int, updates: int) -> None:
    with open_dadb(target) as db:
        for i in range(updates):
            db.record(f"agent-{i % 3}", reward=(worker + i) % 2, cost_usd=0.001, tokens=10,
                      domain="math" if i % 2 else None)


def test_four_processes_lose_no_update(dadb_store) -> None:
    target = dadb_store.target("dadb")
    dadb_store.open("dadb").close()
    context = mp.get_context("spawn")
    workers = [context.Process(target=_hammer, args=(target, w, 500)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    with dadb_store.open("dadb") as db:
        assert dadb_store.backend == "postgres" or db.journal_mode == "wal"
        stats = db.stats()
        assert db.total_visits() == 2000
        assert {a: s.visits for a, s in stats.items()} == {"agent-0": 668, "agent-1": 668, "agent-2": 664}
        assert sum(s.token_sum for s in stats.values()) == 20_000
        assert sum(s.reward_sum for s in stats.values()) == 1000
        assert db.total_visits("math") == 1000
        assert sum(s.cost_sum for s in stats.values()) == pytest.approx(2.0)


def test_record_accumulates_sums_and_domain_rows(dadb_store) -> None:
    db = dadb_store.open()
    assert db.record("a", 1.0, 0.01, 100, domain="math")
    assert db.record("a", 0.5, 0.03, 300)
    total = db.stats(["a", "never"])
    assert total["a"].visits == 2 and total["a"].reward_sum == 1.5 and total["a"].reward_sq_sum == 1.25
    assert total["a"].mean_reward == 0.75 and total["a"].mean_cost == pytest.approx(0.02)
    assert total["a"].token_sum == 400 and total["a"].reward_variance == pytest.approx(0.0625)
    assert total["never"] == AgentStats("never") and total["never"].smoothed_reward == 1.0
    math_stats = db.stats(domain="math")
    assert list(math_stats) == ["a"] and math_stats["a"].visits == 1 and math_stats["a"].domain == "math"
    assert db.domains() == ["math"] and db.total_visits("math") == 1 and db.total_visits() == 2


def test_test_mode_is_frozen(dadb_store) -> None:
    with dadb_store.open("frozen") as db:
        db.record("a", 1.0, 0.0, 1)
    with dadb_store.open("frozen", mode="test") as frozen:
        assert frozen.mode == "test"
        assert frozen.record("a", 0.0, 0.0, 1) is False
        assert frozen.stats()["a"].visits == 1
    live = dadb_store.open()
    live.freeze()
    assert live.mode == "test" and not live.record("b", 1.0, 0.0, 1) and live.total_visits() == 0


def test_only_training_creates_a_dadb(dadb_store, tmp_path) -> None:
    target = dadb_store.target("typo")
    with pytest.raises(DADBMissingError) as refused:
        dadb_store.open("typo", mode="test")
    assert str(refused.value).startswith(f"{target}: no DADB there; a test run only reads one that a training run "
                                         f"made: check the name, or train one first with reso eval --mode train")
    assert list(tmp_path.iterdir()) == [], "a refused test run creates no file"
    with pytest.raises(DADBMissingError):  # nor a table: the database still holds no DADB
        dadb_store.open("typo", mode="test")
    with dadb_store.open("typo") as trained:
        trained.record("a", 1.0, 0.0, 1)
    with dadb_store.open("typo", mode="test") as frozen:
        assert frozen.total_visits() == 1


def test_a_test_run_never_creates_the_folders_of_a_missing_dadb(tmp_path) -> None:
    missing = tmp_path / "runs" / "demo" / "dadb.sqlit"
    with pytest.raises(DADBMissingError, match="dadb.sqlit: no DADB there"):
        open_dadb(str(missing), mode="test")
    assert list(tmp_path.iterdir()) == []
    assert open_dadb(None, mode="test").total_visits() == 0, "the in-memory default stays as it is"


@pytest.mark.parametrize(
    ("args", "message"),
    [(("a", float("nan"), 0.0, 1), "finite"), (("a", 1.0, -1.0, 1), "cost_usd"), (("a", 1.0, 0.0, -2), "tokens"),
     (("", 1.0, 0.0, 1), "agent_id"), (("a", 1.0, 0.0, 1, ""), "domain")],
)
def test_bad_updates_are_rejected(args, message, dadb_store) -> None:
    db = dadb_store.open()
    with pytest.raises(ValueError, match=message):
        db.record(*args)
    assert db.total_visits() == 0


def test_export_import_round_trips_exactly(tmp_path, dadb_store) -> None:
    source = dadb_store.open("a")
    source.record("x", 0.1, 0.000123, 7, domain="chem")
    source.record("x", 0.7, 1e-7, 3)
    source.record("y", 1 / 3, 0.3, 11)
    source.export_json(tmp_path / "dump.json")
    dadb_store.open("b").close()  # only training creates a DADB; loading one is allowed in test mode
    target = dadb_store.open("b", mode="test")
    assert target.import_json(tmp_path / "dump.json") == 3
    assert target.all_stats() == source.all_stats()
    target.export_json(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == json.loads((tmp_path / "dump.json").read_text())


def test_import_rejects_other_files(tmp_path, dadb_store) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"stats": []}')
    with pytest.raises(ValueError, match="not a DADB export"):
        dadb_store.open().import_json(bad)
    bad.write_text('{"format": "reso-dadb", "stats": [{"agent_id": "a", "colour": 1}]}')
    with pytest.raises(ValueError, match=r"stats\[0\]"):
        dadb_store.open().import_json(bad)


def test_version_moves_on_own_and_foreign_writes(dadb_store) -> None:
    reader, writer = dadb_store.open("v"), dadb_store.open("v")
    start = reader.version
    writer.record("a", 1.0, 0.0, 1)
    assert reader.version != start
    now = reader.version
    reader.record("a", 1.0, 0.0, 1)
    assert reader.version == (now[0] + 1, now[1])


def test_closing_folds_the_log_into_the_file_so_the_file_alone_is_the_dadb(tmp_path):
    import shutil

    path = tmp_path / "d.sqlite"
    dadb = DADB(path)
    for _ in range(3):
        dadb.record("a", 1.0, 0.01, 10)
    dadb.close()
    copy = tmp_path / "copy.sqlite"
    shutil.copyfile(path, copy)  # the main file only, as a user copying "the DADB" would
    assert DADB(copy, mode="test").stats(["a"])["a"].visits == 3
