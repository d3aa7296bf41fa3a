"""The offline main job: for each benchmark of a world, learn on its train split, then test ReSo against the
baselines a reviewer asks for, and write the comparison.

Per benchmark:

1. ReSo in training mode on the train split: rule rewards update the DADB, and every candidate's answer is
   kept as a labelled CRM record.
2. The CRM is fitted on the training split (nothing from the test side). `calibrated` (the default): the
   small learned CRM trained on the pool's recorded, labelled answers to the training side's questions
   (every question of the split, not just those the training composites use; in a second process while
   the first benchmark trains and runs the baselines that need no CRM), then recalibrated on the
   training run's own records with each model's record (`reward/calibrated_crm.py`); a pool without
   labelled recordings (live endpoints) falls back to the vote. `vote`: a vote weighted by each model's
   training record, whose coincidence rate of wrong answers is measured on the training run's records.
   `staged`: a staged pass asks the training questions again the way the test's
   adaptive fine stage asks (on a copy of the DADB, the test's first stage, then always its escalation to
   the most reliable remaining agent), and the small learned CRM is fitted on those answers,
   its group model on exactly the groups the fine stage scores (`reward/staged_crm.py`).
3. ReSo's fine stage (adaptive, peer, or peer on records: `reso.evals.jobs.fine_stages`) is chosen on a
   validation part of the training side (`reso.evals.jobs.validation`).
4. On the test split, with the DADB frozen: ReSo (that stage, that CRM) at its default cost weight and at a
   few others (the accuracy–cost picture), ReSo with each other stage, every model of the pool alone,
   majority votes of the three and five models with the best training record, a cascade whose models are
   chosen from the training record, the random-selection ablation, and the oracle (which uses the labels).

Worlds: `many` (default) replays real answers of a dozen models to linked MATH level-5 and GSM8K
composites; `open` the same benchmarks with the open-weight models only; `two-model` is the earlier GPT-4 +
Mixtral GSM8K-MAS job. Each benchmark's team leaves out the replay models that record too few of its
training questions (`reso.evals.jobs.benchmark_pool`). Nothing calls an API; `--pool` points the same job at
real endpoints. A user's own recordings (`DemoConfig.recorded`,
`reso.evals.jobs.recorded_benchmark`) replace the world's benchmarks with composites of their own files.

The parts are modules of `reso.evals.jobs`: the worlds and `DemoConfig` (`config`), one run and a
benchmark's plan of runs (`runs`), the baselines chosen from the training record (`baselines`), the CRM fit
(`crm_fit`, the general CRM's second process in `crm_background`), and the tables (`comparison`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.evals.datasets import Problem, load_dataset
from reso.evals.jobs.baselines import recorded_baselines
from reso.evals.jobs.benchmark_pool import benchmark_roster
from reso.evals.jobs.comparison import mark_best_on_training, write_benchmark_frontier
from reso.evals.jobs.config import CRMS, RESO_TEST, WORLDS, Benchmark, DemoConfig, benchmarks_of, world_pool
from reso.evals.jobs.crm_background import general_crm_in_background
from reso.evals.jobs.crm_fit import benchmark_questions, fit_crm, fit_skills, of_questions, training_answers
from reso.evals.jobs.events import (
    BASELINES,
    FITTING_CRM,
    TESTING_RESO,
    TRAINING,
    WAITING_FOR_CRM,
    DemoProgress,
    Log,
    LogProgress,
    PlannedRun,
)
from reso.evals.jobs.fine_stages import FineStage, choose_by_record, stage_changes
from reso.evals.jobs.runs import TRAINING_RUN, crm_runs, plan_runs, run_folder, run_method, run_table_row
from reso.evals.method_kind import MethodKind
from reso.evals.methods import llm_agents
from reso.evals.reports.report import write_sweep_report
from reso.graphs.escalation import AskingRule
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, settings_pool, team_for
from reso.reward.labelled_records import LabelledRecord, load_records


def choose_stage(config: DemoConfig, test: ReSoSettings, team: Team, train_set: str, train: Sequence[Problem],
                 answers: Sequence[LabelledRecord], run_records: Sequence[LabelledRecord], out: Path,
                 progress: DemoProgress, own: set[str] | None = None) -> FineStage:
    """ReSo's fine stage on this benchmark: chosen on a validation part of the training side with the
    calibrated CRM and the recorded `answers` to refit it on (`reso.evals.jobs.validation`; `run_records`: the
    training run's), else by the training record (`choose_by_record`); the choice and why go to `progress`."""
    from reso.evals.jobs.validation import choose_on_validation

    if config.crm != "calibrated" or not answers:
        stage, why = choose_by_record(team)
    else:
        choice = choose_on_validation(test.replace(db=str(validation_dadb(out))), train, train_set, answers,
                                      run_records, out / "validation", own=own,
                                      concurrency=config.concurrency, note=progress.note)
        stage, why = choice.stage, choice.why
    progress.note(f"fine stage: {why}")
    return stage


def train(config: DemoConfig, base: ReSoSettings, dataset: str, problems: Sequence[Problem], out: Path,
          progress: DemoProgress, title: str) -> None:
    """Train ReSo on `problems` into `out/train-reso` (the DADB `base.db`), snapshotting the DADB for
    validation when training reaches the validation composites (`reso.evals.jobs.validation`). A resumed
    training run already past them without a snapshot (a crash in between) starts over."""
    from reso.evals.jobs.runs import resumed
    from reso.evals.jobs.validation import snapshot_dadb, validation_part

    settings = base.replace({"reward.scorer": config.training_scorer, "asking.rule": AskingRule.FIXED,
                             "asking.k": config.training_k, "selection.exploration_c": config.training_exploration},
                            mode=Mode.TRAIN, answer_value_usd=config.training_answer_value_usd)
    before = len(problems) - len(validation_part(problems))
    snapshot = validation_dadb(out)
    done = len(resumed(out / "train-reso", problems))
    if done > before and not snapshot.exists():
        progress.note(f"{title}: no DADB snapshot for validation: training starts over")
        shutil.rmtree(out / "train-reso")
        for stale in out.glob("dadb.sqlite*"):
            stale.unlink()
        done = 0
    # Past the validation composites already (a resumed run), the snapshot taken then stands.
    pause = (before, lambda: snapshot_dadb(Path(settings.db), snapshot)) if done <= before else None
    run_method(config, dataset, "reso", out / "train-reso", settings, problems, progress, title,
               label=TRAINING_RUN, pause=pause)


def fitted_reso(config: DemoConfig, judged: ReSoSettings, team: Team, train_set: str, train: Sequence[Problem],
                out: Path, progress: DemoProgress) -> tuple[ReSoSettings, FineStage, dict[FineStage, dict[str, Any]]]:
    """ReSo's test settings once its judges are fitted on the training side (`judged`: with the fitted CRM):
    the question skills and the peer stages' error table on the benchmark's own files' labelled answers (the
    training run's records without recordings), and the fine stage chosen (`choose_stage`); with the stage and
    every stage's changes."""
    answers = training_answers(config, team.pool)
    own = benchmark_questions(team.pool, train)
    run_records = load_records(out / "train-reso" / "crm_records.jsonl")
    labelled = of_questions(answers, own) or run_records
    judged = judged.replace({"asking.skills": fit_skills(labelled, out / "skills", judged.selection.embedder)})
    stage = choose_stage(config, judged, team, train_set, train, answers, run_records, out, progress, own)
    stages = stage_changes(judged.reward.scorer, labelled, out, judged.selection.embedder)
    return judged.replace(stages[stage]), stage, stages


def validation_dadb(out: Path) -> Path:
    """The DADB validation reads: the training run's before the validation composites."""
    return out / "validation" / "dadb.sqlite"


@dataclass(frozen=True)
class Prepared:
    """A benchmark ready to run: its folder, splits, roster and questions, read before the job starts so that
    every benchmark's runs are planned (and the whole job's ETA known) from the start."""

    benchmark: Benchmark
    out: Path
    train_set: str
    test_set: str
    world: str
    base: ReSoSettings
    train: list[Problem]
    test: list[Problem]
    left_out: tuple[str, ...] = ()
    """The world's models left out of the benchmark's roster (too few recordings of its training side)."""

    def first_plan(self, config: DemoConfig) -> list[PlannedRun]:
        """The runs as guessed before training: which votes and the cascade the training record allows is
        known after it."""
        models = llm_agents(settings_pool(self.base))
        guess = ["oracle", *(("vote:3", "vote:5", "cascade") if len(models) >= 5 else
                             ("vote:3", "cascade") if len(models) >= 3 else ())]
        return plan_runs(config, self.out, self.train, self.test, [*(f"single:{agent}" for agent in models), *guess])


def prepare_benchmark(config: DemoConfig, benchmark: Benchmark, progress: DemoProgress) -> Prepared:
    """Read one benchmark's splits and roster (a left-out model is a note to `progress`)."""
    out = config.out / benchmark.stem
    train_set, test_set = benchmark.splits(config.level)
    if config.swap_split:
        train_set, test_set = test_set, train_set
    # The roster is the same whatever --train-limit: it is read off the whole training side.
    world = world_pool(config, benchmark)
    roster = benchmark_roster(world, load_dataset(train_set), out, config.min_recorded)
    if roster.left_out:
        progress.note(f"{benchmark.title}: left out, recording fewer than {config.min_recorded:.0%} of the training "
                      f"questions: {', '.join(sorted(roster.left_out, key=str.lower))}; the benchmark's pool: {roster.pool}")
    base = ReSoSettings(pool=roster.pool, seed=config.seed, db=str(out / "dadb.sqlite"))
    return Prepared(benchmark, out, train_set, test_set, world, base,
                    load_dataset(train_set, limit=config.train_limit), load_dataset(test_set, limit=config.test_limit),
                    tuple(sorted(roster.left_out)))


def run_benchmark(config: DemoConfig, prepared: Prepared, progress: DemoProgress | None = None,
                  crm_ready: Callable[[], object] = lambda: None) -> list[dict[str, Any]]:
    """Train, then test every method on one benchmark; returns the test summaries (ReSo first). What it does
    goes to `progress` (default: a line per run, printed).

    The baselines that never consult the CRM (each model alone, vote:3, the cascade, the oracle) run before
    it is fitted; `crm_ready` blocks until a CRM trained elsewhere (`general_crm_in_background`) is there.
    """
    progress = progress or LogProgress(print)
    title, out, base = prepared.benchmark.title, prepared.out, prepared.base
    train_set, test_set, train_problems, test_problems = (prepared.train_set, prepared.test_set, prepared.train,
                                                          prepared.test)
    progress.start_phase(title, TRAINING)
    train(config, base, train_set, train_problems, out, progress, title)

    without_crm = base.replace({"reward.scorer": "consensus", **RESO_TEST}, mode=Mode.TEST)
    team = team_for(without_crm)
    singles = [f"single:{agent}" for agent in llm_agents(team.pool)]
    others = ["oracle", *recorded_baselines(team, progress.note)]
    progress.plan(title, plan_runs(config, out, train_problems, test_problems, [*singles, *others]))
    progress.start_phase(title, BASELINES)
    # (label, method, run folder, settings)
    done = {method: run_table_row(config, test_set, test_problems, out,
                                  (method, method, run_folder(method), without_crm), progress, title)
            for method in [*singles, *others]}

    if config.crm == "calibrated":
        progress.start_phase(title, WAITING_FOR_CRM)
    crm_ready()
    progress.start_phase(title, FITTING_CRM)
    scorer = fit_crm(config, out, train_set, base, progress, title, prepared.world)
    progress.note(f"CRM fitted on the training split: {scorer}")
    tested = base.replace({"reward.scorer": scorer, **RESO_TEST}, mode=Mode.TEST)
    test, stage, stages = fitted_reso(config, tested, team, train_set, train_problems, out, progress)
    if stage != FineStage.CRM:  # the plan guessed the CRM stage: its rows change names
        progress.plan(title, plan_runs(config, out, train_problems, test_problems, [*singles, *others], stage))
    runs = [(label, method, folder, test.replace(changes) if changes else test)
            for label, method, folder, changes in crm_runs(config, stage, stages)]
    progress.start_phase(title, TESTING_RESO)
    done |= {run[0]: run_table_row(config, test_set, test_problems, out, run, progress, title)
             for run in runs}

    write_sweep_report(out)
    write_benchmark_frontier(out, title)
    # In the order the tables list them; the single model with the best training record marked as such.
    reso_labels = [label for label, method, _, _ in runs if method == MethodKind.RESO]
    summaries = [done[label] for label in [*reso_labels, *singles, "random", *others]]
    return mark_best_on_training(summaries, team)


def run_demo(config: DemoConfig, log: Log = print,
             progress: DemoProgress | None = None) -> dict[str, list[dict[str, Any]]]:
    """Run the whole job: test summaries by benchmark stem. What it does goes to `progress`; without one,
    `log` gets a line as each run starts, and the notes (`LogProgress`)."""
    if config.world not in WORLDS:
        raise ValueError(f"unknown world {config.world!r}; choose one of {', '.join(WORLDS)}")
    if config.crm not in CRMS:
        raise ValueError(f"unknown CRM {config.crm!r}; choose one of {', '.join(CRMS)}")
    shown = progress or LogProgress(log)
    benchmarks = benchmarks_of(config)
    with general_crm_in_background(config, shown) as crm_ready:
        # Every benchmark planned first, so the whole job's runs are known before the first one starts.
        prepared = [prepare_benchmark(config, benchmark, shown) for benchmark in benchmarks]
        for each in prepared:
            shown.plan(each.benchmark.title, each.first_plan(config))
        return {each.benchmark.stem: run_benchmark(config, each, shown, crm_ready) for each in prepared}
