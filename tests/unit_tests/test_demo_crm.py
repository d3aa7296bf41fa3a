"""`reso demo --crm`: which CRM the main job fits on the training split. The staged CRM is fitted on a staged
pass that learns on a copy of the trained DADB (the test sees the DADB training left), its groups are the
fine stage's, and every ReSo test run scores with it; a bad --crm is one error line, exit 2."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from reso.agents.dadb.sqlite import DADB
from reso.evals.jobs.config import CRMS, RESO_TEST, WORLDS, DemoConfig, world_pool
from reso.evals.jobs.crm_background import general_crm_in_background
from reso.evals.jobs.crm_fit import staged_pass
from reso.evals.jobs.demo import run_demo
from reso.evals.jobs.events import LogProgress
from reso.graphs.settings import ReSoSettings
from reso.reward.labelled_records import load_records
from reso.reward.small_crm import is_small_crm_dir
from tests.unit_tests.test_bad_input_cli import assert_one_error_line, invoke


def visits(db: Path) -> dict[str, int]:
    dadb = DADB(db, mode="test")
    try:
        return {agent: stats.visits for agent, stats in dadb.stats().items()}
    finally:
        dadb.close()


@pytest.fixture(scope="module")
def staged_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo-staged")
    config = DemoConfig(out=out, world="two-model", train_limit=10, test_limit=4, concurrency=4, reso_variants={},
                        crm="staged")
    return config, run_demo(config, log=lambda line: None)


def test_every_reso_test_run_scores_with_the_staged_crm(staged_demo) -> None:
    config, by_benchmark = staged_demo
    out = config.out / "gsm8k-mas"
    assert is_small_crm_dir(out / "crm-staged")
    reso = json.loads((out / "test-reso" / "summary.json").read_text())
    assert reso["settings"]["reward.scorer"] == "staged:../crm-staged"  # relative to the run folder
    assert reso["settings"]["asking.rule"] == RESO_TEST["asking.rule"]
    assert reso["settings"]["asking.k_max"] == RESO_TEST["asking.k_max"]
    assert reso["scorer_failures"]["failed"] == 0 and reso["scorer_failures"]["scored"] > 0
    assert [s["label"] for s in by_benchmark["gsm8k-mas"]][0] == "reso"


def test_the_staged_pass_asks_like_the_fine_stage_and_leaves_the_trained_dadb_alone(staged_demo) -> None:
    config, _ = staged_demo
    out = config.out / "gsm8k-mas"
    trained = visits(out / "dadb.sqlite")
    base = ReSoSettings(pool=world_pool(config, WORLDS["two-model"][0]), seed=config.seed,
                        db=str(out / "dadb.sqlite"))
    run_dir = staged_pass(config, out, "gsm8k-mas-easy-train", base, LogProgress(lambda line: None))  # starts over
    assert visits(out / "dadb.sqlite") == trained
    learned = visits(run_dir / "dadb.sqlite")
    assert sum(learned.values()) > sum(trained.values())
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["n"] == 10 and summary["settings"]["selection.exploration_c"] == 0.0
    # Two models in this pool: every sub-question's first stage asks both (no third to escalate to); the
    # integration step has the tool alone.
    sizes = Counter(Counter(r.question_id for r in load_records(run_dir / "crm_records.jsonl")).values())
    assert set(sizes) <= {1, 2} and sizes[2] > 0


def test_an_unknown_crm_is_refused(tmp_path: Path) -> None:
    assert CRMS == ("calibrated", "vote", "staged")
    out = tmp_path / "demo"
    assert_one_error_line(invoke("demo", "--crm", "learned", "--out", str(out)), 2,
                          "demo.crm must be one of calibrated, vote, staged, got 'learned'")
    assert not out.exists()
    with pytest.raises(ValueError, match="demo.crm must be one of calibrated, vote, staged, got 'learned'"):
        run_demo(DemoConfig(out=out, world="two-model", crm="learned"))


def test_a_failed_background_crm_fit_is_raised_where_the_demo_waits_for_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-pool.yaml"
    with general_crm_in_background(DemoConfig(out=tmp_path / "demo", pool=str(missing))) as crm_ready:
        with pytest.raises(Exception, match="no-such-pool.yaml"):
            crm_ready()
    assert not (tmp_path / "demo" / "crm-general").exists()
    with general_crm_in_background(DemoConfig(out=tmp_path / "vote", crm="vote")) as crm_ready:
        assert crm_ready() is None  # the vote needs no background fit
