"""The main job on a small slice of the two-model world: every method runs, the baselines chosen from the
training record are the ones the record implies, the default CRM is the general small CRM (trained on the
pool's recorded answers to training questions, in a second process) calibrated on the training run, the
table carries intervals and paired differences, and the job reports each stage, run and item as it goes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from reso.agents.defaults import data_dir, two_model_pool_path
from reso.agents.selection.question_skills import QuestionSkills
from reso.evals.datasets import load_dataset
from reso.evals.jobs.baselines import cascade_from_record
from reso.evals.jobs.comparison import comparison_rows
from reso.evals.jobs.config import DemoConfig
from reso.evals.jobs.demo import run_demo
from reso.evals.jobs.events import (
    BASELINES,
    FITTING_CRM,
    GENERAL_CRM,
    TESTING_RESO,
    TRAINING,
    WAITING_FOR_CRM,
    PlannedRun,
    RunStart,
)
from reso.evals.jobs.fine_stages import STAGE_LABELS, FineStage
from reso.evals.jobs.runs import run_folder
from reso.evals.methods import MethodError, best_recorded
from reso.graphs.settings import DEFAULT_ANSWER_VALUE_USD, ReSoSettings
from reso.graphs.team import build_team
from reso.reward.labelled_records import load_records, split_by_question
from reso.reward.small_crm import is_small_crm_dir


class Recorder:
    """A `DemoProgress` that keeps every event in the order it came."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def plan(self, benchmark: str, runs: list[PlannedRun]) -> None:
        self.events.append(("plan", benchmark, list(runs)))

    def start_phase(self, benchmark: str, stage: str) -> None:
        self.events.append(("stage", benchmark, stage))

    def run_started(self, run: RunStart) -> None:
        self.events.append(("run", run))

    def item_done(self, row: dict[str, Any]) -> None:
        self.events.append(("item", row["id"]))

    def run_finished(self, run: RunStart, summary: dict[str, Any]) -> None:
        self.events.append(("finished", run, summary["n"]))

    def background(self, task: str, running: bool, error: str | None = None) -> None:
        self.events.append(("background", task, running, error))

    def note(self, line: str) -> None:
        self.events.append(("note", line))


@pytest.fixture(scope="module")
def demo_events() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory, demo_events):
    out = tmp_path_factory.mktemp("demo")
    config = DemoConfig(out=out, world="two-model", train_limit=12, test_limit=6, concurrency=4,
                        reso_variants={"fixed k=2": {"asking.rule": "fixed", "asking.k": 2}}, answer_values=(0.0001, 1.0))
    return out, run_demo(config, progress=demo_events)


def test_every_method_runs_on_the_same_test_items(small_demo):
    out, by_benchmark = small_demo
    summaries = by_benchmark["gsm8k-mas"]
    methods = [s["method"] for s in summaries]
    assert methods[:4] == ["reso"] * 4
    assert {"random", "oracle"} <= set(methods)
    assert sum(m.startswith("single:") for m in methods) == 2
    # Two models are too few for vote:3 and a cascade: they are left out, not faked.
    assert not any(m.startswith(("vote:", "cascade:")) for m in methods)
    assert all(s["n"] == 6 for s in summaries)
    reso = json.loads((out / "gsm8k-mas" / "test-reso" / "summary.json").read_text())
    assert reso["settings"]["asking.rule"] == "priced" and reso["settings"]["asking.k_max"] == 4
    assert reso["settings"]["answer_value_usd"] == DEFAULT_ANSWER_VALUE_USD
    # Question skills fitted on the training side's recorded answers, read by every ReSo run (the run's files
    # name them relative to the run folder: reso.evals.portable).
    assert reso["settings"]["asking.skills"] == "../skills"
    assert QuestionSkills.load(out / "gsm8k-mas" / "skills").right.shape[1] == 2
    # The frontier's sweep: one run per value of a right answer, otherwise the ReSo row's settings.
    for value, folder in ((0.0001, "test-reso-value-0.0001"), (1.0, "test-reso-value-1")):
        swept = json.loads((out / "gsm8k-mas" / folder / "summary.json").read_text())["settings"]
        assert swept == {**reso["settings"], "answer_value_usd": value, "db": swept["db"]}


def test_the_table_names_the_best_single_model_and_its_paired_differences(small_demo):
    out, by_benchmark = small_demo
    rows = comparison_rows(out / "gsm8k-mas", by_benchmark["gsm8k-mas"])
    labels = [row["method"] for row in rows]
    assert labels[:4] == ["reso", "reso (answer worth $0.0001)", "reso (answer worth $1)", "reso (fixed k=2)"]
    best = next(row for row in rows if row["method"].startswith("best single model on the test"))
    assert best["diff_vs_best_single_ci95"] == [0.0, 0.0] and best["cost_vs_best_single"] == pytest.approx(1.0)
    singles = [s for s in by_benchmark["gsm8k-mas"] if s["method"].startswith("single:")]
    assert best["accuracy"] == max(s["accuracy"] for s in singles)
    assert "oracle (uses labels)" in labels
    for row in rows:
        low, high = row["accuracy_ci95"]
        assert low <= row["accuracy"] <= high


def test_vote_and_cascade_come_from_the_training_record(small_demo):
    out, _ = small_demo
    team = build_team(ReSoSettings(pool=str(two_model_pool_path()), db=str(out / "gsm8k-mas" / "dadb.sqlite"),
                                   mode="test"))
    # GPT-4 was right more often than Mixtral in training, so it leads the record.
    assert team.agent(best_recorded(team, 2)[0]).model.short_name == "gpt-4"
    with pytest.raises(MethodError, match="needs 3 models"):
        best_recorded(team, 3)
    with pytest.raises(MethodError, match="three models"):
        cascade_from_record(team)


def test_the_default_crm_is_the_general_crm_calibrated_on_the_training_run(small_demo):
    out, by_benchmark = small_demo
    general = out / "crm-general"
    assert is_small_crm_dir(general)
    # Trained on every labelled recording of the pool's two models to the training side's questions.
    recorded = split_by_question(load_records(data_dir() / "gsm8k_replay_dev.jsonl"), "train")
    trained_on = json.loads((general / "trained_on.json").read_text())
    assert trained_on["side"] == "train" and trained_on["answers"] == len(recorded)
    assert len(trained_on["models"]) == 2
    calibration = json.loads((out / "gsm8k-mas" / "crm-calibrated" / "calibration.json").read_text())
    assert calibration["base"] == f"small:{general}"
    _, crm_weight, _ = calibration["coefficients"]
    assert crm_weight > 0  # a higher CRM score means more likely right after calibration too
    summaries = {s["label"]: s for s in by_benchmark["gsm8k-mas"]}
    bench = out / "gsm8k-mas"
    # Written relative to the run folder (reso.evals.portable): the judges' folders are the benchmark's.
    calibrated = "calibrated:../crm-calibrated"
    chosen = json.loads((bench / "validation" / "choice.json").read_text())["stage"]
    # ReSo's rows judge with the stage validation chose; the CRM stage's row, whichever it is, with the CRM.
    scorer = {"crm": calibrated, "peer": "peer:../crm-peer", "peer on records": "peer:../crm-peer-records",
              "judge": "signals:../judge"}[chosen]
    for label in ("reso", "reso (answer worth $1)", "reso (fixed k=2)", "random"):
        assert summaries[label]["settings"]["reward.scorer"] == scorer
    with_crm = summaries["reso" if chosen == "crm" else "reso (CRM stage)"]
    assert with_crm["settings"]["reward.scorer"] == calibrated
    assert with_crm["scorer_failures"]["failed"] == 0 and with_crm["scorer_failures"]["scored"] > 0
    # Baselines that keep by agreement or by the labels never load the CRM.
    assert "oracle" in summaries and sum(label.startswith("single:") for label in summaries) == 2
    for label, summary in summaries.items():
        if label.startswith("single:") or label == "oracle":
            assert summary["settings"]["reward.scorer"] == "consensus"


TITLE = "GSM8K-MAS (GPT-4 and Mixtral)"
SINGLES = ["single:gpt-4/arithmetic-word-problems", "single:mixtral/arithmetic-word-problems"]


def test_the_progress_hears_every_stage_in_order(small_demo, demo_events):
    stages = [event[1:] for event in demo_events.events if event[0] == "stage"]
    assert stages == [(TITLE, TRAINING), (TITLE, BASELINES), (TITLE, WAITING_FOR_CRM), (TITLE, FITTING_CRM),
                      (TITLE, TESTING_RESO)]
    background = [event[1:] for event in demo_events.events if event[0] == "background"]
    assert background == [(GENERAL_CRM, True, None), (GENERAL_CRM, False, None)]
    notes = [event[1] for event in demo_events.events if event[0] == "note"]
    assert notes[0] == "baseline left out: vote:3 needs 3 models; pool 'gsm8k-two-model-replay' has 2"
    assert notes[1] == f"CRM fitted on the training split: calibrated:{small_demo[0] / 'gsm8k-mas' / 'crm-calibrated'}"


def test_the_progress_counts_each_runs_items_against_the_plan(small_demo, demo_events):
    out, _ = small_demo
    plans = [event[2] for event in demo_events.events if event[0] == "plan"]
    chosen = FineStage(json.loads((out / "gsm8k-mas" / "validation" / "choice.json").read_text())["stage"])
    # Sent before training (two models: no vote:3 or cascade to guess), again after it, when the training
    # run's folder holds its 12 items, and once more when validation chose another stage than the CRM's that
    # the plan guessed (the rows' names change).
    assert len(plans) == (2 if chosen == FineStage.CRM else 3)
    assert plans[1] == [dataclasses.replace(plans[0][0], done=12), *plans[0][1:]]

    def expected_runs(stage: FineStage) -> list[tuple[str, str, str, int]]:
        others = [(run_folder(f"reso {label}"), f"reso ({label})", "test", 6)
                  for other, label in STAGE_LABELS.items() if other != stage]
        return [("train-reso", "reso (training)", "train", 12),
                ("test-single-gpt-4-arithmetic-word-problems", SINGLES[0], "test", 6),
                ("test-single-mixtral-arithmetic-word-problems", SINGLES[1], "test", 6),
                ("test-oracle", "oracle", "test", 6), ("test-reso", "reso", "test", 6),
                ("test-reso-value-0.0001", "reso (answer worth $0.0001)", "test", 6),
                ("test-reso-value-1", "reso (answer worth $1)", "test", 6),
                ("test-reso-fixed-k-2", "reso (fixed k=2)", "test", 6), *others, ("test-random", "random", "test", 6)]

    assert [(p.folder, p.label, p.mode, p.items, p.done) for p in plans[0]] == [
        (*run, 0) for run in expected_runs(FineStage.CRM)]
    expected = expected_runs(chosen)
    assert [(p.folder, p.label, p.mode, p.items) for p in plans[-1]] == expected
    # Each run: started with nothing done, then each of its items once, then finished with all of them.
    runs: list[tuple[RunStart, list[str]]] = []
    open_run = None
    for event in demo_events.events:
        if event[0] == "run":
            assert open_run is None
            open_run = event[1]
            runs.append((open_run, []))
        elif event[0] == "item":
            assert open_run is not None
            runs[-1][1].append(event[1])
        elif event[0] == "finished":
            assert event[1] == open_run and event[2] == open_run.items
            open_run = None
    assert open_run is None
    assert [(r.folder, r.label, r.mode, r.items, r.done, r.benchmark) for r, _ in runs] == [
        (out / "gsm8k-mas" / folder, label, mode, items, 0, TITLE) for folder, label, mode, items in expected]
    assert [len(set(items)) for _, items in runs] == [12] + [6] * 11
    assert [len(items) for _, items in runs] == [12] + [6] * 11


def test_the_fine_stage_is_chosen_on_a_validation_part_of_the_training_side(small_demo, demo_events):
    out, by_benchmark = small_demo
    bench = out / "gsm8k-mas"
    summaries = {s["label"]: s for s in by_benchmark["gsm8k-mas"]}
    choice = json.loads((bench / "validation" / "choice.json").read_text())
    # The last quarter of the 12 training composites, answered by every stage with a CRM refitted without
    # their questions' recorded answers.
    assert choice["composites"] == 3 and set(choice["scores"]) == {"crm", "peer", "peer on records", "judge"}
    # The stage worth most at the default value of a right answer, net of its cost per composite.
    worth = {stage: accuracy * DEFAULT_ANSWER_VALUE_USD - usd / 3 for stage, (accuracy, usd) in choice["scores"].items()}
    assert choice["scores"][choice["stage"]] == max(choice["scores"].values(), key=lambda score: (
        score[0] * DEFAULT_ANSWER_VALUE_USD - score[1] / 3, -score[1]))
    assert worth[choice["stage"]] == max(worth.values()) and "net of its cost" in choice["why"]
    assert is_small_crm_dir(bench / "validation" / "crm-general")
    notes = [event[1] for event in demo_events.events if event[0] == "note"]
    assert f"fine stage: {choice['why']}" in notes
    # The ReSo row runs the chosen stage with the test's CRM; every other stage runs as a row of its own.
    # Written relative to the run folder (reso.evals.portable): the CRM folders are the benchmark's.
    calibrated = "calibrated:../crm-calibrated"
    scorers = {"crm": calibrated, "peer": "peer:../crm-peer", "peer on records": "peer:../crm-peer-records",
               "judge": "signals:../judge"}
    labels = {"crm": "reso (CRM stage)", "peer": "reso (peer stage)",
              "peer on records": "reso (peer stage on records)", "judge": "reso (judge stage)"}
    for stage, scorer in scorers.items():
        row = summaries["reso"] if stage == choice["stage"] else summaries[labels[stage]]
        assert row["settings"]["reward.scorer"] == scorer
        # Every stage asks what pays at the default value of a right answer; they differ in who judges.
        assert (row["settings"]["asking.rule"], row["settings"]["asking.k_max"], row["settings"]["answer_value_usd"]) == (
            "priced", 4, DEFAULT_ANSWER_VALUE_USD)
    assert labels[choice["stage"]] not in summaries
    assert json.loads((bench / "crm-peer" / "peer.json").read_text())["base"] == f"calibrated:{bench / 'crm-calibrated'}"
    assert json.loads((bench / "crm-peer-records" / "peer.json").read_text())["base"] == "reliability"
    # The peer posteriors' error table is counted on the pool's recorded answers to the training side.
    pairs = json.loads((bench / "crm-peer" / "peer_errors.json").read_text())
    recorded = split_by_question(load_records(data_dir() / "gsm8k_replay_dev.jsonl"), "train")
    assert [counts["both"] for counts in pairs.values()] == [len({r.instruction for r in recorded})]


def test_validation_reads_the_dadb_as_training_left_it_before_the_validation_composites(small_demo):
    from reso.agents.dadb.sqlite import DADB

    out, _ = small_demo
    bench = out / "gsm8k-mas"
    rows = [json.loads(line) for line in (bench / "train-reso" / "results.jsonl").read_text().splitlines()]
    train_ids = [p.id for p in load_dataset("gsm8k-mas-easy-train", limit=12)]
    by_id = {row["id"]: row for row in rows}
    # Training answers the composites in order; the last quarter (3 of 12) is validation's.
    replayed = DADB()
    replayed.record_many(tuple(update) for item in train_ids[:9] for update in by_id[item]["dadb_updates"])
    snapshot = DADB(bench / "validation" / "dadb.sqlite", mode="test")
    trained = DADB(bench / "dadb.sqlite", mode="test")
    try:
        assert [(s.agent_id, s.domain, s.visits, s.reward_sum) for s in snapshot.all_stats()] == [
            (s.agent_id, s.domain, s.visits, s.reward_sum) for s in replayed.all_stats()]
        assert 0 < snapshot.total_visits() < trained.total_visits()
    finally:
        snapshot.close()
        trained.close()
    validation = [json.loads(line) for line in (bench / "validation" / "run-crm" / "results.jsonl").read_text().splitlines()]
    assert sorted(row["id"] for row in validation) == sorted(train_ids[9:])


def test_the_benchmarks_frontier_is_read_along_the_budget_knob(small_demo):
    from reso.evals.reports.frontier import Frontier

    out, _ = small_demo
    bench = out / "gsm8k-mas"
    found = Frontier.from_json(json.loads((bench / "frontier.json").read_text()))
    assert (bench / "frontier.png").stat().st_size > 10_000
    on_hull = {Path(point.folder).name for point in found.points if point.in_router_hull}
    assert on_hull == {"test-reso", "test-reso-value-0.0001", "test-reso-value-1"}
    # Every test run is a point on the frontier's picture, each single model's among them.
    assert {Path(point.folder).name for point in found.points} == {
        p.name for p in bench.glob("test-*") if (p / "summary.json").is_file()}
    assert found.best_single in {"single:gpt-4-1106-preview", "single:mistralai/Mixtral-8x7B-Instruct-v0.1"}
    assert found.items == 6 and len(found.budgets) == 9
