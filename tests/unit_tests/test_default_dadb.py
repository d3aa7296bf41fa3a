"""The trained DADB shipped for the default pool: made from the current pool file, its recordings and the main
job's training composites and settings (regenerate it with `python -m reso.evals.jobs.default_dadb` when
this fails), it has learned, a test run on the default pool reads it when no DADB is named (and nothing else
does), it is never written, and making it is reproducible."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from reso.agents.dadb.base import DADBError, DADBMissingError, Mode
from reso.agents.dadb.open import default_db, is_default_pool, open_dadb
from reso.agents.defaults import (
    data_dir,
    default_dadb_path,
    default_pool_path,
    two_model_pool_path,
    zeroeval_pool_path,
)
from reso.agents.pool import load_pool
from reso.evals.jobs import default_dadb as maker
from reso.evals.jobs.config import WORLDS, DemoConfig
from reso.graphs.settings import ReSoSettings

REGENERATE = "the shipped DADB is out of date: python -m reso.evals.jobs.default_dadb"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def provenance() -> dict:
    return maker.read_provenance()


def test_the_default_pool_is_the_twelve_model_roster() -> None:
    assert default_pool_path() == zeroeval_pool_path()
    models = {agent.model.spec for agent in load_pool(default_pool_path()) if agent.kind == "llm"}
    assert len(models) == 12
    assert ReSoSettings().pool == "" and is_default_pool("")


def test_the_shipped_dadb_is_small_and_packaged() -> None:
    assert default_dadb_path().parent == data_dir() and default_dadb_path().is_file()
    assert default_dadb_path().stat().st_size < 100_000
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"*.json"' in pyproject.split("[tool.setuptools.package-data]")[1].split("\n[")[0]


def test_its_provenance_matches_the_current_pool_file_and_recordings(provenance: dict) -> None:
    pool = provenance["pool"]
    assert pool["file"] == default_pool_path().name
    assert pool["sha256"] == sha256(default_pool_path()), REGENERATE
    assert pool["recordings"] == {name: sha256(data_dir() / name) for name in pool["recordings"]}, REGENERATE
    assert set(pool["recordings"]) == {"math_l5_dev.jsonl.gz", "gsm8k_dev.jsonl.gz"}
    assert provenance["command"] == maker.COMMAND  # the whole training side: no --train-limit
    assert provenance["code"]["commit"] and provenance["code"]["uncommitted_changes"] is False


def test_its_provenance_matches_the_main_jobs_training(provenance: dict) -> None:
    """The benchmarks, their training composites (by content) and the training settings are the main job's
    now."""
    from reso.evals.datasets import load_dataset
    from reso.evals.provenance import item_hash

    config = DemoConfig(out=Path("unused"))
    assert [b["benchmark"] for b in provenance["benchmarks"]] == [b.stem for b in WORLDS[maker.WORLD]]
    for recorded, benchmark in zip(provenance["benchmarks"], WORLDS[maker.WORLD], strict=True):
        train_set = benchmark.splits(config.level)[0]
        problems = load_dataset(train_set)
        digest = hashlib.sha256(json.dumps({p.id: item_hash(p) for p in problems}, sort_keys=True).encode())
        assert (recorded["dataset"], recorded["composites"]) == (train_set, len(problems)), REGENERATE
        assert recorded["composites_sha256"] == digest.hexdigest(), REGENERATE
        assert recorded["left_out"] == []  # every model of the pool records enough of both benchmarks
    assert provenance["training"] == {
        "world": "many", "level": config.level, "seed": config.seed, "train_limit": None,
        "min_recorded": config.min_recorded, "scorer": config.training_scorer, "asking": "fixed",
        "k": config.training_k, "answer_value_usd": str(config.training_answer_value_usd),
        "exploration": config.training_exploration, "concurrency": config.training_concurrency,
        "embedder": ReSoSettings().selection.embedder}, REGENERATE


def test_loading_it_gives_learned_reputations() -> None:
    dadb = open_dadb(default_dadb_path(), mode=Mode.TEST)
    pool = load_pool(default_pool_path())
    stats = dadb.stats()
    assert dadb.total_visits() > 1000 and set(stats) <= set(pool.ids)
    assert {"math", "arithmetic", "integration"} <= set(dadb.domains())
    # Every model of the roster was tried; what the rows hold is learned, not the prior (1.0 unvisited).
    by_model: dict[str, list[float]] = {}
    for agent_id, row in stats.items():
        assert row.visits > 0 and row.cost_sum >= 0
        model = pool.get(agent_id).model.model_name
        visits, rewards = by_model.setdefault(model, [0, 0.0])
        by_model[model] = [visits + row.visits, rewards + row.reward_sum]
    assert len(by_model) == 13  # twelve models and the exact tool
    mean = {model: rewards / visits for model, (visits, rewards) in by_model.items()}
    assert len({round(value, 3) for value in mean.values()}) > 5
    assert mean["o1-mini-2024-09-12"] > 0.9 > mean["gemma-2-2b-it"]
    assert any(row.smoothed_reward != 1.0 for row in stats.values())


def test_a_test_run_on_the_default_pool_reads_it_and_nothing_else_does(tmp_path: Path) -> None:
    shipped = str(default_dadb_path())
    assert default_db("", "", Mode.TEST) == shipped
    assert default_db(None, str(default_pool_path()), "test") == shipped
    copy = tmp_path / "copy.yaml"
    shutil.copyfile(default_pool_path(), copy)
    assert default_db("", str(copy), Mode.TEST) == shipped  # the same bytes: the same pool
    assert default_db("", str(two_model_pool_path()), Mode.TEST) == ""
    assert default_db("", "", Mode.TRAIN) == ""  # a training run starts from nothing, as before
    assert default_db("mine.sqlite", "", Mode.TEST) == "mine.sqlite"  # --db still chooses


def test_an_export_is_read_only_and_never_written(tmp_path: Path) -> None:
    before = sha256(default_dadb_path())
    dadb = open_dadb(default_dadb_path(), mode=Mode.TEST)
    agent = next(iter(dadb.stats()))
    assert dadb.record(agent, 1.0, 0.0, 1, "math") is False
    dadb.close()
    assert sha256(default_dadb_path()) == before and not list(data_dir().glob("zeroeval_dadb.json?*"))
    with pytest.raises(DADBError, match="read-only"):
        open_dadb(default_dadb_path(), mode=Mode.TRAIN)
    with pytest.raises(DADBMissingError):
        open_dadb(tmp_path / "none.json", mode=Mode.TEST)
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(DADBError, match="not a DADB export"):
        open_dadb(bad, mode=Mode.TEST)


def test_making_it_again_gives_the_same_file(tmp_path: Path) -> None:
    """On a slice of the training side (the whole takes about 30 s): made twice, the same rows."""
    made = tmp_path / "made.json"
    assert maker.main(["--out", str(made), "--work", str(tmp_path / "work"), "--train-limit", "2"]) == 0
    document = json.loads(made.read_text(encoding="utf-8"))
    assert document["format"] == "reso-dadb" and document["provenance"]["training"]["train_limit"] == 2
    assert document["provenance"]["command"] == maker.COMMAND + " --train-limit 2"
    assert all(row["last_update"] == 0.0 for row in document["stats"])
    assert maker.main(["--out", str(made), "--train-limit", "2", "--check"]) == 0
