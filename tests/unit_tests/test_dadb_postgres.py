"""What the PostgreSQL DADB adds to the shared guarantees (tests/unit_tests/test_dadb.py runs those on both):
choice by URL scheme, concurrent writers of one key, a server restart mid-run, and a password kept out of
every message. Runs on the session's throwaway server (unix socket); skips where no server is installed.
"""

from __future__ import annotations

import threading

import pytest

from reso.agents.dadb.base import DADBError
from reso.agents.dadb.open import open_dadb
from reso.agents.dadb.sqlite import DADB

PASSWORD = "pw-canary-4c1e9b7a"


def test_open_dadb_picks_the_implementation_by_scheme(tmp_path, postgres_url) -> None:
    from reso.agents.dadb.postgres import PostgresDADB

    on_file = open_dadb(str(tmp_path / "d.sqlite"))
    assert isinstance(on_file, DADB) and on_file.path == tmp_path / "d.sqlite"
    assert isinstance(open_dadb(None), DADB) and open_dadb("").path is None
    short = open_dadb(postgres_url.replace("postgresql://", "postgres://", 1))
    on_server = open_dadb(postgres_url, mode="test")
    assert isinstance(on_server, PostgresDADB) and on_server.mode == "test" and on_server.path is None
    short.record("a", 1.0, 0.0, 1)
    assert on_server.total_visits() == 1, "both schemes name the same database"


def test_concurrent_writers_of_one_key_apply_it_once_and_never_deadlock(postgres_url) -> None:
    keys = [f"run/{i}" for i in range(40)]
    agents = ["a", "b", "c", "d"]

    def writer(worker: int) -> None:
        with open_dadb(postgres_url) as db:
            for key in keys if worker % 2 else reversed(keys):
                # Opposite agent orders in alternate workers: rows locked out of order would deadlock.
                order = agents if worker % 2 else list(reversed(agents))
                db.record_batch(key, [(agent, 1.0, 0.5, 2, "algebra") for agent in order])
                db.record_many([(agent, 0.0, 0.0, 1, None) for agent in reversed(order)])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    with open_dadb(postgres_url, mode="test") as db:
        assert db.applied_keys("run/") == set(keys)
        assert db.total_visits("algebra") == len(keys) * len(agents), "each key once, whoever wrote it first"
        assert db.total_visits() == len(keys) * len(agents) + 4 * len(keys) * len(agents)
        assert {s.agent_id: s.visits for s in db.stats(domain="algebra").values()} == dict.fromkeys(agents, 40)


def test_a_server_restart_mid_run_is_retried_and_nothing_is_lost_or_doubled(postgres_server, postgres_url) -> None:
    db = open_dadb(postgres_url)
    db.record("a", 1.0, 0.1, 10)
    assert db.record_batch("item/1", [("a", 0.5, 0.1, 10, None)])
    postgres_server.restart()  # cuts this connection off
    assert db.record("a", 1.0, 0.1, 10)
    assert db.record_batch("item/1", [("a", 0.5, 0.1, 10, None)]) is False, "still applied once"
    assert db.record_batch("item/2", [("b", 0.0, 0.1, 10, "geometry")])
    assert db.total_visits() == 4 and db.stats(["a"])["a"].visits == 3 and db.total_visits("geometry") == 1


def test_an_unreachable_server_is_one_line_after_the_retry_window(postgres_server, postgres_url) -> None:
    from reso.agents.dadb.postgres import PostgresDADB

    db = PostgresDADB(postgres_url, retry_s=0.3)
    postgres_server.halt()
    try:
        with pytest.raises(DADBError, match="cannot reach the DADB") as raised:
            db.record("a", 1.0, 0.0, 1)
    finally:
        postgres_server.start()
    message = str(raised.value)
    assert "\n" not in message and message.startswith(db.location)
    assert db.record("a", 1.0, 0.0, 1) and db.total_visits() == 1, "usable again once the server is back"


def test_the_password_never_shows_in_reprs_or_errors(postgres_server) -> None:
    role = "canary_user"
    postgres_server.admin(f"DROP ROLE IF EXISTS {role}", f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
    database = postgres_server.create_database(owner=role)
    url = postgres_server.url(database, user=role, password=PASSWORD)
    with open_dadb(url) as db:  # the password is really needed: the server asks it of every role but its own
        assert db.record("a", 1.0, 0.0, 1)
        assert PASSWORD not in repr(db) and PASSWORD not in db.location and ":***@" in db.location
    with pytest.raises(DADBError) as wrong:
        open_dadb(postgres_server.url(database, user=role, password=PASSWORD + "-wrong"))
    assert "password authentication failed" in str(wrong.value) and PASSWORD not in str(wrong.value)
    with pytest.raises(DADBError) as refused:
        open_dadb(url.replace(PASSWORD, ""))
    assert PASSWORD not in str(refused.value)


def test_a_table_of_another_shape_is_refused_naming_the_database(postgres_server, postgres_url) -> None:
    database = postgres_url.split("/")[3].split("?")[0]
    postgres_server.admin("CREATE TABLE agent_stats (agent TEXT)", database=database)
    with pytest.raises(DADBError, match=f"{database}.*cannot use as a DADB"):
        open_dadb(postgres_url)
