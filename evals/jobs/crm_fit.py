"""The main job's CRM, fitted on the training split only: the calibrated CRM (the general small CRM on the
pool's recorded answers to the training side's questions, recalibrated on the training run's records), the
vote, or the staged CRM (fitted on a staged pass over the training questions); see `reso.evals.jobs.demo`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.agents.pool import Pool
from reso.agents.profiles import AgentKind, Provider
from reso.evals.datasets import Problem, load_dataset
from reso.evals.jobs.config import CRMS, DemoConfig, training_side
from reso.evals.jobs.events import DemoProgress, Log
from reso.evals.jobs.runs import STAGED_PASS, run_method
from reso.graphs.escalation import AskingRule
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import settings_pool, team_for
from reso.reward.labelled_records import LabelledRecord

# How the staged pass asks the training questions: the shape of the fine stage the staged CRM is fitted to
# (the first two candidates, then always one escalation: a confidence no score reaches).
STAGED_ASKING: dict[str, Any] = {"asking.rule": AskingRule.CONFIDENCE, "asking.k": 2, "asking.k_max": 3,
                                 "asking.confidence": 1.0}


def fit_vote(records_path: Path) -> str:
    """The CRM fitted to a training run's labelled records: the reliability-weighted vote with its
    coincidence rate q (how often two wrong answers to one sub-question agree) measured on them; the
    agents' reliabilities come from the DADB the same run trained."""
    from reso.reward.answers import extract_answer
    from reso.reward.labelled_records import load_records
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
    settings = base.replace({"reward.scorer": "rule", "selection.exploration_c": 0.0, **STAGED_ASKING}, mode=Mode.TRAIN,
                            db=str(copy))
    # A team of its own, not the process's cached one: a cached team would still hold the copy it
    # learned on before, which was just replaced.
    team = build_team(settings)
    try:
        run_method(config, dataset, "reso", run_dir, settings, load_dataset(dataset, limit=config.train_limit),
                   progress, benchmark, label=STAGED_PASS, team=team)
    finally:
        if team.dadb is not None:
            team.dadb.close()
    return run_dir


def fit_staged(records_path: Path, out: Path) -> str:
    """The staged CRM fitted on a staged pass's records and saved to `out`; returns its scorer spec."""
    from reso.reward.labelled_records import load_records
    from reso.reward.training.staged_crm_fit import fit_staged_crm

    crm = fit_staged_crm(load_records(records_path), k=int(STAGED_ASKING["asking.k"]),
                         k_max=int(STAGED_ASKING["asking.k_max"]))
    crm.save(out)
    return f"staged:{out}"


def recorded_answers(pool: Pool) -> list[LabelledRecord]:
    """The labelled answers recorded for the pool's replay models (their files' `correct` flags), each file
    read once; empty when no model of the pool replays a labelled recording."""
    return [answer for answers in recorded_files(pool).values() for answer in answers]


def recorded_files(pool: Pool) -> dict[Path, list[LabelledRecord]]:
    """`recorded_answers` by the replay file that holds them."""
    from reso.agents.adapters.replay import resolve_replay_path, split_replay_target
    from reso.reward.labelled_records import load_records

    wanted: dict[Path, set[str]] = {}
    for agent in pool:
        if agent.kind != AgentKind.TOOL and agent.model.provider == Provider.REPLAY:
            files, model = split_replay_target(agent.model.target)
            for name in files:
                wanted.setdefault(resolve_replay_path(name), set()).add(model)
    return {path: [r for r in load_records(path) if r.model in models] for path, models in wanted.items()}


def benchmark_questions(pool: Pool, problems: Sequence[Problem]) -> set[str] | None:
    """The question ids of the replay files that record a source question of `problems` (a benchmark's
    composites); None when no file names those sources. How models err together on MATH says little of
    GSM8K, so a benchmark's error table is counted on its own files' questions (`of_questions`)."""
    sources = {str(qid) for problem in problems for qid in (problem.meta.get("step_question_ids") or {}).values()}
    ids = {str(r.question_id) for records in recorded_files(pool).values()
           if any(r.question_id in sources for r in records) for r in records}
    return ids or None


def fit_skills(records: Sequence[LabelledRecord], folder: Path, embedder: str) -> str:
    """Question skills (`reso.agents.selection.question_skills`) fitted on labelled answers and saved to
    `folder`; its path, for `ReSoSettings.skills`."""
    from reso.agents.selection.embeddings import load_embedder
    from reso.agents.selection.question_skills import QuestionSkills

    QuestionSkills.fit([r.instruction for r in records], [r.model or r.agent_id or "" for r in records],
                       [int(r.label) for r in records], load_embedder(embedder)).save(folder)
    return str(folder)


def of_questions(answers: Sequence[LabelledRecord], ids: set[str] | None) -> list[LabelledRecord]:
    """The answers to the questions `ids` (all of them when None, or when none is)."""
    own = [answer for answer in answers if ids is None or answer.question_id in ids]
    return own or list(answers)


def training_answers(config: DemoConfig, pool: Pool) -> list[LabelledRecord]:
    """The pool's recorded, labelled answers to the training side's questions (none for live endpoints)."""
    from reso.reward.labelled_records import split_by_question

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
    from reso.reward.labelled_records import load_records
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
