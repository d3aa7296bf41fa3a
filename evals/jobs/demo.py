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
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import multiprocessing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.agents.pool import Pool
from reso.agents.profiles import AgentKind, Provider
from reso.evals.backends.base import Backend
from reso.evals.datasets import Problem, load_dataset
from reso.evals.eval_config import EvalConfig
from reso.evals.jobs.benchmark_pool import MIN_RECORDED, benchmark_roster
from reso.evals.jobs.events import (
    BASELINES,
    FITTING_CRM,
    GENERAL_CRM,
    TESTING_RESO,
    TRAINING,
    WAITING_FOR_CRM,
    DemoProgress,
    LogProgress,
    PlannedRun,
    RunStart,
)
from reso.evals.jobs.fine_stages import STAGE_LABELS, Stage, choose_by_record, stage_changes
from reso.evals.jobs.recorded_benchmark import RecordedBenchmark
from reso.evals.methods import MethodError, best_recorded, llm_agents, model_name, parse_method
from reso.evals.reports.report import write_run_report, write_sweep_report
from reso.evals.runner import run_eval
from reso.graphs.escalation import EscalateTo
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, settings_pool, team_for
from reso.reward.records import LabelledRecord, load_records

Log = Callable[[str], None]


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of a world: its dataset names are `<stem>-<level>-train|test`."""

    stem: str
    title: str
    pool: str = ""
    """The world's default pool (a packaged file name or a path); empty: the embedded two-model pool."""
    datasets: tuple[str, str] | None = None
    """The (train, test) datasets, names or files; None: the registered `<stem>-<level>-train|test`."""

    def splits(self, level: str) -> tuple[str, str]:
        return self.datasets or (f"{self.stem}-{level}-train", f"{self.stem}-{level}-test")


WORLDS: dict[str, tuple[Benchmark, ...]] = {
    "many": (
        Benchmark("math-l5-mas", "MATH-MAS-L5", "zeroeval_pool.yaml"),
        Benchmark("gsm8k-l-mas", "GSM8K-MAS (linked)", "zeroeval_pool.yaml"),
    ),
    "open": (
        Benchmark("math-l5-mas", "MATH-MAS-L5 (open-weight models)", "open_pool.yaml"),
        Benchmark("gsm8k-l-mas", "GSM8K-MAS (linked, open-weight models)", "open_pool.yaml"),
    ),
    "two-model": (Benchmark("gsm8k-mas", "GSM8K-MAS (GPT-4 and Mixtral)"),),
}

# ReSo's settings in the main job, fixed before any test run: the first two candidates answer (the second
# only when its model's training record is within `peer_margin` of the first's), and while the CRM gives the
# best answer less than this probability of being right, one more agent answers (the first in the coarse
# stage's cost-aware order that is more likely right than that answer; the peer stages ask a diverse peer
# instead, once more: `reso.evals.jobs.fine_stages`), once (k_max - k).
RESO_TEST = {"k": 2, "k_max": 3, "confidence": 0.8}
# The CRMs `reso demo` can fit on the training split (see the module docstring); the first is the default.
CRMS = ("calibrated", "vote", "staged")
# Further ReSo settings run for the accuracy–cost picture, each against the main row: cheaper and dearer
# selection, the paper's fixed fine stage (what the adaptive stage adds), a first stage that keeps both
# candidates however far apart their records are (what leaving out a far weaker peer saves), and escalation
# to the most reliable model whatever its price (the earlier rule).
RESO_VARIANTS: dict[str, dict[str, Any]] = {
    "cost weight 0.3": {"cost_weight": 0.3},
    "cost weight 3": {"cost_weight": 3.0},
    "fixed k=2": {"k_max": None, "confidence": None},
    "whole first stage": {"peer_margin": 1.0},
    "escalate to the most reliable": {"escalate_to": EscalateTo.RELIABLE},
}

# How progress names the two training-mode runs (the test runs go by their table labels).
TRAINING_RUN = "reso (training)"
STAGED_PASS = "reso (staged pass)"


@dataclass(frozen=True)
class DemoConfig:
    """What `reso demo` runs: the world, the composite size, the pool, and how training and testing go."""

    out: Path
    world: str = "many"
    level: str = "easy"
    pool: str = ""
    concurrency: int = 16
    seed: int = 0
    train_limit: int | None = None
    test_limit: int | None = None
    training_scorer: str = "consensus"
    training_k: int = 3
    training_concurrency: int = 1
    """Training questions run one at a time, so what the DADB learns does not depend on which concurrent
    question finishes first (each selection has its own random stream, so sibling subtasks in worker
    threads draw alike in any order): the job is reproducible."""
    training_exploration: float = 1.0
    """Plain Thompson sampling in training: a learning run should not give up on an agent after an unlucky
    start (routing's sharper default, 0.3, can)."""
    training_cost_weight: float = 0.0
    """Training selects on skill alone, so every model's record is learned, the dear ones' too; the test
    weighs cost (a deployment pays; an offline training run on replayed answers does not)."""
    reso_variants: dict[str, dict[str, Any]] = field(default_factory=lambda: dict(RESO_VARIANTS))
    swap_split: bool = False
    """Train on the test split's composites and test on the training split's: a second draw whose test
    questions are all different from the first's."""
    crm: str = CRMS[0]
    """The CRM fitted on the training split and used by every ReSo test run: one of `CRMS`."""
    backend: Backend | None = None
    """Where the questions are answered (`reso.evals.backends.base`); None: in this process."""
    recorded: RecordedBenchmark | None = None
    """The user's own question files instead of the world's benchmarks
    (`reso.evals.jobs.recorded_benchmark`)."""
    min_recorded: float = MIN_RECORDED
    """A benchmark's team leaves out the replay models that record less than this share of its training
    composites' questions (`reso.evals.jobs.benchmark_pool`); 0 keeps every model."""


def world_pool(config: DemoConfig, benchmark: Benchmark) -> str:
    """The pool file a benchmark runs on: `--pool`, else the world's packaged pool."""
    if config.pool or not benchmark.pool:
        return config.pool
    from reso.agents.defaults import data_dir

    return str(data_dir() / benchmark.pool)


def cascade_from_record(team: Team) -> str:
    """The cascade baseline chosen from the training record alone: the model with the best record answers
    last; first the two best-recorded models whose list price (mean of input and output) is at most a tenth
    of its price (when fewer are, the two best-recorded models cheaper than it)."""
    ranked = best_recorded(team, len(llm_agents(team.pool)))
    strong = team.agent(ranked[0])

    def price(agent_id: str) -> float:
        agent = team.agent(agent_id)
        return (agent.price_in + agent.price_out) / 2

    cheap = [a for a in ranked[1:] if price(a) <= price(strong.id) / 10][:2]
    if len(cheap) < 2:
        cheap = [a for a in ranked[1:] if price(a) < price(strong.id)][:2]
    if len(cheap) < 2:
        raise MethodError("a cascade needs three models: two cheap ones, then the strong one")
    return f"cascade:{','.join(model_name(team.agent(a)) for a in cheap)}>{model_name(strong)}"


def recorded_baselines(team: Team, log: Log) -> list[str]:
    """`vote:3`, `vote:5` (a pool of five models or more) and the cascade, all chosen from the training
    record; left out (with a note) when the pool has too few models or the DADB learned nothing."""
    methods = []
    try:
        best_recorded(team, 3)
        methods.append("vote:3")
        if len(llm_agents(team.pool)) >= 5:
            methods.append("vote:5")
        methods.append(cascade_from_record(team))
    except MethodError as error:
        log(f"baseline left out: {error}")
    return methods


def resumed(run_dir: Path, problems: Sequence[Problem]) -> list[dict[str, Any]]:
    """The rows of `problems` that `run_dir` holds already (a run resuming there skips them); none when its
    results file cannot be read (the run itself then says why)."""
    from reso.evals.results import ResultsFormatError, finished_rows

    try:
        rows = finished_rows(run_dir / "results.jsonl")
    except (OSError, UnicodeDecodeError, ResultsFormatError):
        return []
    return [row for problem in problems if (row := rows.get(problem.id)) is not None]


def _run(config: DemoConfig, dataset: str, method: str, run_dir: Path, settings: ReSoSettings,
         problems: Sequence[Problem], progress: DemoProgress, benchmark: str, label: str | None = None,
         team: Team | None = None) -> dict[str, Any]:
    done = resumed(run_dir, problems)
    run = RunStart(benchmark=benchmark, label=label or method, dataset=dataset, mode=settings.mode,
                   folder=run_dir, items=len(problems), done=len(done),
                   correct=sum(bool(row["correct"]) for row in done),
                   cost_usd=sum(row["usage"]["cost_usd"] for row in done))
    progress.run_started(run)  # before the team is built: the first build (models, embedder) takes a while
    team = team or team_for(settings)
    concurrency = config.training_concurrency if settings.mode == Mode.TRAIN else config.concurrency
    eval_config = EvalConfig(dataset=dataset, method=parse_method(method, team.pool), out=run_dir,
                             settings=settings, concurrency=concurrency)
    summary = asyncio.run(run_eval(eval_config, problems, team, progress=progress.item_done,
                                   backend=config.backend))
    write_run_report(run_dir)
    progress.run_finished(run, summary)
    return {**summary, "run": run_dir.name}


def fit_vote(records_path: Path) -> str:
    """The CRM fitted to a training run's labelled records: the reliability-weighted vote with its
    coincidence rate q (how often two wrong answers to one sub-question agree) measured on them; the
    agents' reliabilities come from the DADB the same run trained."""
    from reso.reward.answers import extract_answer
    from reso.reward.records import load_records
    from reso.reward.reliability_vote import coincidence_rate

    # One wrong answer per model and sub-question: a sub-question recurs across composites, and a model's
    # repeated answer to it agrees with itself trivially.
    wrong: dict[str, dict[str | None, str]] = {}
    for record in load_records(records_path):
        value = extract_answer(record.answer) if not record.label else None
        if value is not None:
            wrong.setdefault(record.question_id or record.instruction, {})[record.model] = value
    q = coincidence_rate([list(values.values()) for values in wrong.values()])
    # Clamped away from 0 and 1: a rate of 0 (no coinciding pair in a small run) would make agreement proof.
    return f"reliability:{min(max(q if q is not None else 0.2, 0.02), 0.5):.4f}"


def staged_pass(config: DemoConfig, out: Path, dataset: str, base: ReSoSettings, progress: DemoProgress,
                benchmark: str = "") -> Path:
    """Ask the training questions the way the test's adaptive fine stage asks, and return the run folder
    (its `crm_records.jsonl` holds each subtask's answers in the order they were asked).

    The pass learns on a copy of the trained DADB, so the test sees the DADB training left. It exploits
    that DADB as the test does (no exploration, the test's cost weight); its scorer is the rule without
    references, which scores every answer 0, so every subtask escalates as far as the test may and the CRM
    meets both the first stage's groups and the escalated ones.
    """
    from reso.agents.dadb.sqlite import DADB
    from reso.graphs.team import build_team

    run_dir = out / "train-staged"
    run_dir.mkdir(parents=True, exist_ok=True)
    copy = run_dir / "dadb.sqlite"
    for stale in run_dir.glob("dadb.sqlite*"):
        stale.unlink()
    for leftover in ("results.jsonl", "crm_records.jsonl"):  # a rerun starts over, like its DADB copy
        (run_dir / leftover).unlink(missing_ok=True)
    trained, target = DADB(out / "dadb.sqlite", mode=Mode.TEST), DADB(copy, mode=Mode.TRAIN)
    try:
        target.load_stats(trained.all_stats())
    finally:
        trained.close()
        target.close()
    settings = base.replace(mode=Mode.TRAIN, db=str(copy), scorer="rule", exploration=0.0,
                            **{**RESO_TEST, "confidence": 1.0})
    # A team of its own, not the process's cached one: a cached team would still hold the copy it
    # learned on before, which was just replaced.
    team = build_team(settings)
    try:
        _run(config, dataset, "reso", run_dir, settings, load_dataset(dataset, limit=config.train_limit),
             progress, benchmark, label=STAGED_PASS, team=team)
    finally:
        if team.dadb is not None:
            team.dadb.close()
    return run_dir


def fit_staged(records_path: Path, out: Path) -> str:
    """The staged CRM fitted on a staged pass's records and saved to `out`; returns its scorer spec."""
    from reso.reward.records import load_records
    from reso.reward.training.staged_crm_fit import fit_staged_crm

    crm = fit_staged_crm(load_records(records_path), k=int(RESO_TEST["k"]), k_max=int(RESO_TEST["k_max"]))
    crm.save(out)
    return f"staged:{out}"


def recorded_answers(pool: Pool) -> list[LabelledRecord]:
    """The labelled answers recorded for the pool's replay models (their files' `correct` flags), each file
    read once; empty when no model of the pool replays a labelled recording."""
    from reso.agents.adapters.replay import resolve_replay_path, split_replay_target
    from reso.reward.records import load_records

    wanted: dict[Path, set[str]] = {}
    for agent in pool:
        if agent.kind != AgentKind.TOOL and agent.model.provider == Provider.REPLAY:
            files, model = split_replay_target(agent.model.target)
            for name in files:
                wanted.setdefault(resolve_replay_path(name), set()).add(model)
    answers: list[LabelledRecord] = []
    for path, models in wanted.items():
        answers += [r for r in load_records(path) if r.model in models]
    return answers


def training_side(config: DemoConfig) -> str:
    """The side of the question split the training composites come from (`split_by_question`'s name)."""
    return "test" if config.swap_split else "train"


def training_answers(config: DemoConfig, pool: Pool) -> list[LabelledRecord]:
    """The pool's recorded, labelled answers to the training side's questions (none for live endpoints)."""
    from reso.reward.records import split_by_question

    if config.recorded is not None:  # the answers to the questions of the training side's own files
        texts = config.recorded.question_texts(training_side(config))
        return [r for r in recorded_answers(pool) if " ".join(r.instruction.split()) in texts]
    return split_by_question(recorded_answers(pool), training_side(config))


def fit_general_crm(config: DemoConfig, pool: Pool, out: Path, log: Log) -> str | None:
    """The small CRM trained on the pool's recorded answers to the training side's questions, saved to
    `out` (every setting by grouped cross-validation); its scorer spec, or None without recordings. A
    folder already holding a CRM fitted on the same answers is reused (both benchmarks share one)."""
    from reso.reward.small_crm import is_small_crm_dir
    from reso.reward.training.small_crm_fit import fit_small_crm

    answers = training_answers(config, pool)
    if not answers:
        return None
    models = sorted({r.model or "" for r in answers})
    fingerprint = {"models": models, "answers": len(answers), "side": training_side(config), "seed": config.seed,
                   "files": list(config.recorded.sources()) if config.recorded is not None else None}
    stamp = out / "trained_on.json"
    if not (is_small_crm_dir(out) and stamp.exists() and json.loads(stamp.read_text()) == fingerprint):
        log(f"training the small CRM on {len(answers)} recorded answers of {len(models)} models "
            f"to the training side's questions → {out}")
        fit_small_crm(answers, tune=True).save(out)
        stamp.write_text(json.dumps(fingerprint, indent=2), encoding="utf-8")
    return f"small:{out}"


def fit_calibrated(config: DemoConfig, out: Path, base: ReSoSettings, progress: DemoProgress,
                   general_pool: str | None = None) -> str:
    """The general CRM recalibrated on the training run's records and saved to `out/crm-calibrated`; the
    vote when the pool has no labelled recordings to train the general CRM on. The general CRM learns from
    the recordings of `general_pool`'s models (default: `base`'s pool): the world's whole pool, which every
    benchmark shares, not the benchmark's roster."""
    from reso.reward.records import load_records
    from reso.reward.training.calibration_fit import fit_calibration

    records = out / "train-reso" / "crm_records.jsonl"
    pool = team_for(base).pool if general_pool is None else settings_pool(ReSoSettings(pool=general_pool))
    general = fit_general_crm(config, pool, config.out / "crm-general", progress.note)
    if general is None:
        progress.note("no labelled recordings of the pool's models to train the small CRM on: "
                      "the CRM is the vote")
        return fit_vote(records)
    scorer = fit_calibration(general, load_records(records))
    scorer.save(out / "crm-calibrated")
    return f"calibrated:{out / 'crm-calibrated'}"


def fit_crm(config: DemoConfig, out: Path, dataset: str, base: ReSoSettings, progress: DemoProgress,
            benchmark: str = "", general_pool: str | None = None) -> str:
    """The scorer spec of the CRM `config.crm` names, fitted on the training split (`general_pool`: the pool
    the general CRM learns from, `fit_calibrated`)."""
    if config.crm == "calibrated":
        return fit_calibrated(config, out, base, progress, general_pool)
    if config.crm == "vote":
        return fit_vote(out / "train-reso" / "crm_records.jsonl")
    if config.crm == "staged":
        staged = staged_pass(config, out, dataset, base, progress, benchmark)
        return fit_staged(staged / "crm_records.jsonl", out / "crm-staged")
    raise ValueError(f"unknown CRM {config.crm!r}; choose one of {', '.join(CRMS)}")


def _folder(method: str) -> str:
    return "test-" + "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in method)


def crm_runs(config: DemoConfig, stage: Stage = Stage.ADAPTIVE,
             stages: Mapping[Stage, dict[str, Any]] | None = None) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The test runs that use the fitted CRM, in the order they run: (label, method, run folder, changes to
    ReSo's test settings, which use the fine stage `stage`); then ReSo with each other fine stage (`stages`:
    each stage's changes, known once the CRM is fitted); random selects agents at random, and the CRM keeps
    their answers."""
    runs: list[tuple[str, str, str, dict[str, Any]]] = [("reso", "reso", "test-reso", {})]
    runs += [(f"reso ({label})", "reso", _folder(f"reso {label}"), changes)
             for label, changes in config.reso_variants.items()]
    runs += [(f"reso ({STAGE_LABELS[other]})", "reso", _folder(f"reso {STAGE_LABELS[other]}"),
              (stages or {}).get(other, {})) for other in Stage if other != stage]
    return [*runs, ("random", "random", _folder("random"), {})]


def plan_runs(config: DemoConfig, out: Path, train: Sequence[Problem], test: Sequence[Problem],
              baselines: Sequence[str], stage: Stage = Stage.ADAPTIVE) -> list[PlannedRun]:
    """Every run of a benchmark in the order it runs, each with the items its folder holds already."""
    def planned(folder: str, label: str, mode: str, problems: Sequence[Problem]) -> PlannedRun:
        return PlannedRun(folder, label, mode, len(problems), len(resumed(out / folder, problems)))

    runs = [planned("train-reso", TRAINING_RUN, Mode.TRAIN, train)]
    runs += [planned(_folder(method), method, Mode.TEST, test) for method in baselines]
    if config.crm == "staged":  # the pass starts over every time
        runs.append(PlannedRun("train-staged", STAGED_PASS, Mode.TRAIN, len(train)))
    return runs + [planned(folder, label, Mode.TEST, test) for label, _, folder, _ in crm_runs(config, stage)]


def choose_stage(config: DemoConfig, test: ReSoSettings, team: Team, train_set: str, train: Sequence[Problem],
                 answers: Sequence[LabelledRecord], run_records: Sequence[LabelledRecord], out: Path,
                 progress: DemoProgress) -> Stage:
    """ReSo's fine stage on this benchmark: chosen on a validation part of the training side with the
    calibrated CRM and the recorded `answers` to refit it on (`reso.evals.jobs.validation`; `run_records`: the
    training run's), else by the training record (`choose_by_record`); the choice and why go to `progress`."""
    from reso.evals.jobs.validation import choose_on_validation

    if config.crm != "calibrated" or not answers:
        stage, why = choose_by_record(team)
    else:
        choice = choose_on_validation(test, train, train_set, answers, run_records, out / "validation",
                                      concurrency=config.concurrency, note=progress.note)
        stage, why = choice.stage, choice.why
    progress.note(f"fine stage: {why}")
    return stage


def run_benchmark(config: DemoConfig, benchmark: Benchmark, progress: DemoProgress | None = None,
                  crm_ready: Callable[[], object] = lambda: None) -> list[dict[str, Any]]:
    """Train, then test every method on one benchmark; returns the test summaries (ReSo first). What it does
    goes to `progress` (default: a line per run, printed).

    The baselines that never consult the CRM (each model alone, vote:3, the cascade, the oracle) run before
    it is fitted; `crm_ready` blocks until a CRM trained elsewhere (`general_crm_in_background`) is there.
    """
    progress = progress or LogProgress(print)
    title = benchmark.title
    out = config.out / benchmark.stem
    train_set, test_set = benchmark.splits(config.level)
    if config.swap_split:
        train_set, test_set = test_set, train_set
    # The roster is the same whatever --train-limit: it is read off the whole training side.
    world = world_pool(config, benchmark)
    roster = benchmark_roster(world, load_dataset(train_set), out, config.min_recorded)
    if roster.left_out:
        progress.note(f"{title}: left out, recording fewer than {config.min_recorded:.0%} of the training "
                      f"questions: {', '.join(sorted(roster.left_out, key=str.lower))}; the benchmark's pool: {roster.pool}")
    base = ReSoSettings(pool=roster.pool, seed=config.seed, db=str(out / "dadb.sqlite"))
    train_problems = load_dataset(train_set, limit=config.train_limit)
    test_problems = load_dataset(test_set, limit=config.test_limit)
    # Which votes and the cascade the training record allows is known after training: guessed until then.
    models = llm_agents(settings_pool(base))
    guess = ["oracle", *(("vote:3", "vote:5", "cascade") if len(models) >= 5 else
                         ("vote:3", "cascade") if len(models) >= 3 else ())]
    progress.plan(title, plan_runs(config, out, train_problems, test_problems,
                                   [*(f"single:{agent}" for agent in models), *guess]))
    progress.start_stage(title, TRAINING)
    train_settings = base.replace(mode=Mode.TRAIN, scorer=config.training_scorer, k=config.training_k,
                                  cost_weight=config.training_cost_weight,
                                  exploration=config.training_exploration)
    _run(config, train_set, "reso", out / "train-reso", train_settings, train_problems, progress, title,
         label=TRAINING_RUN)

    without_crm = base.replace(mode=Mode.TEST, scorer="consensus", **RESO_TEST)
    team = team_for(without_crm)
    singles = [f"single:{agent}" for agent in llm_agents(team.pool)]
    others = ["oracle", *recorded_baselines(team, progress.note)]
    progress.plan(title, plan_runs(config, out, train_problems, test_problems, [*singles, *others]))
    progress.start_stage(title, BASELINES)
    # (label, method, run folder, settings)
    done = {method: _test_run(config, test_set, test_problems, out,
                              (method, method, _folder(method), without_crm), progress, title)
            for method in [*singles, *others]}

    if config.crm == "calibrated":
        progress.start_stage(title, WAITING_FOR_CRM)
    crm_ready()
    progress.start_stage(title, FITTING_CRM)
    scorer = fit_crm(config, out, train_set, base, progress, title, world)
    progress.note(f"CRM fitted on the training split: {scorer}")
    adaptive = base.replace(mode=Mode.TEST, scorer=scorer, **RESO_TEST)
    answers = training_answers(config, team.pool)
    run_records = load_records(out / "train-reso" / "crm_records.jsonl")
    stage = choose_stage(config, adaptive, team, train_set, train_problems, answers, run_records, out, progress)
    stages = stage_changes(scorer, answers or run_records, out, int(RESO_TEST["k_max"]))
    test = adaptive.replace(**stages[stage])
    if stage != Stage.ADAPTIVE:  # the plan guessed the adaptive stage: its rows change names
        progress.plan(title, plan_runs(config, out, train_problems, test_problems, [*singles, *others], stage))
    runs = [(label, method, folder, test.replace(**changes) if changes else test)
            for label, method, folder, changes in crm_runs(config, stage, stages)]
    progress.start_stage(title, TESTING_RESO)
    done |= {run[0]: _test_run(config, test_set, test_problems, out, run, progress, title) for run in runs}

    write_sweep_report(out)
    # In the order the tables list them.
    reso_labels = [label for label, method, _, _ in runs if method == "reso"]
    return [done[label] for label in [*reso_labels, *singles, "random", *others]]


def _test_run(config: DemoConfig, dataset: str, problems: Sequence[Problem], out: Path,
              run: tuple[str, str, str, ReSoSettings], progress: DemoProgress,
              benchmark: str) -> dict[str, Any]:
    """One test run of the table, its summary labelled as the table names it."""
    label, method, folder, settings = run
    summary = _run(config, dataset, method, out / folder, settings, problems, progress, benchmark,
                   label=label)
    if label != method:  # the reports and plots name the variant as the table does
        summary = {**summary, "run_label": label}
        (out / folder / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return {**summary, "label": label}


def _fit_general_crm_here(config: DemoConfig, pool_spec: str) -> str | None:
    """`fit_general_crm` in a worker process (module-level, so a spawned process can import it). It prints
    nothing: the parent shows the fit (a line from here would cut into its display, or into its standard
    output, where `reso demo --json` writes its JSON)."""
    return fit_general_crm(config, team_for(ReSoSettings(pool=pool_spec)).pool, config.out / "crm-general",
                           lambda line: None)


@contextlib.contextmanager
def general_crm_in_background(config: DemoConfig,
                              progress: DemoProgress | None = None) -> Iterator[Callable[[], object]]:
    """With `--crm calibrated`, train the general CRM in a second process while the first benchmark
    trains and runs its baselines (the engine's replay is one busy core; the CRM fit is another), and
    yield a call that waits for it. The benchmarks' own `fit_general_crm` then finds it saved. A failure
    in the worker is raised by that call. `progress` hears when the fit starts and ends."""
    if config.crm != "calibrated":
        yield lambda: None
        return
    shown = progress or LogProgress(print)

    def ended(error: BaseException | None) -> None:
        # Called on the pool's result thread: an exception there would stop it, and the wait would never end.
        with contextlib.suppress(Exception):
            shown.background(GENERAL_CRM, running=False, error=None if error is None else str(error))

    pool_spec = world_pool(config, WORLDS[config.world][0])
    # spawn, not fork: the parent holds threads (the engine's worker threads, OpenMP) a fork would copy.
    # Leaving the block terminates the worker, so an error or Ctrl-C does not wait for the fit.
    with multiprocessing.get_context("spawn").Pool(1) as worker:
        shown.background(GENERAL_CRM, running=True)
        pending = worker.apply_async(_fit_general_crm_here,
                                     (dataclasses.replace(config, backend=None), pool_spec),
                                     callback=lambda _: ended(None), error_callback=ended)
        yield pending.get


def benchmarks_of(config: DemoConfig) -> tuple[Benchmark, ...]:
    """The benchmarks the job runs: the world's, or the user's own files' composites (built into the output
    folder, after checking that no question is on both sides)."""
    recorded = config.recorded
    if recorded is None:
        return WORLDS[config.world]
    if not config.pool:
        raise ValueError("a job on your own question files needs --pool: the models that answer them")
    recorded.check_disjoint()
    datasets = recorded.write_datasets(config.out / recorded.name / "datasets", config.level)
    return (Benchmark(recorded.name, recorded.name, datasets=datasets),)


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
        return {b.stem: run_benchmark(config, b, shown, crm_ready) for b in benchmarks}


def _within(best: dict[str, Any], others: Sequence[dict[str, Any]], points: float) -> dict[str, Any]:
    """The cheapest run whose accuracy is within `points` of `best`'s."""
    close = [s for s in others if s["accuracy"] >= best["accuracy"] - points / 100]
    return min(close, key=lambda s: s["cost_usd"])


def comparison_rows(out: Path, summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table of one benchmark: ReSo's runs, the best single model, the cheapest single model within three
    points of it, vote, cascade, random and the oracle, each with its 95 % interval, its cost relative to the
    best single model, and the paired interval of its accuracy difference from the best single;
    each also on the complete items (every single model has a recording of every sub-question), with the
    gain over the best single split by cause (`reso.evals.reports.benchmark_table`)."""
    from reso.evals.reports.benchmark_table import benchmark_rows

    singles = [s for s in summaries if s["method"].startswith("single:")]
    best = max(singles, key=lambda s: (s["accuracy"], -s["cost_usd"])) if singles else None
    chosen: list[tuple[str, dict[str, Any]]] = []
    for s in summaries:
        if s["method"] == "reso":
            chosen.append((s.get("label", "reso"), s))
    if best is not None:
        chosen.append(("best single: " + s_model(best), best))
        cheap = _within(best, singles, 3.0)
        if cheap is not best:
            chosen.append(("cheapest single within 3 points: " + s_model(cheap), cheap))
    for prefix in ("vote:", "cascade:", "random", "oracle"):
        chosen += [(s.get("method_label", s["method"]), s) for s in summaries if s["method"].startswith(prefix)]
    reference = [s for _, s in chosen].index(best) if best is not None else 0
    return benchmark_rows(out, chosen, reference, singles, best_single=best is not None)


def s_model(summary: dict[str, Any]) -> str:
    return summary["method"].removeprefix("single:").split("/", 1)[0]


def write_comparison(out: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    path = out / "comparison.json"
    path.write_text(json.dumps(tables, indent=2), encoding="utf-8")
    return path
