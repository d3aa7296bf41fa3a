"""Choosing ReSo's fine stage on a validation part of the training side: the test is never looked at.

The last quarter of the training composites is the validation part. The CRM the test uses learned from the
recorded answers to every training-side question, so on those composites it would judge answers it has
seen with their labels, and flatter every stage that reads it. So validation fits the CRM again without
any answer to a question of a validation composite (the general CRM on the other recorded answers, its
calibration on the training run's records of the other questions) and fits each stage's peer posterior on
the same answers. Its DADB is the training run's as it stood before the validation composites
(`snapshot_dadb`, taken when training reaches them: training answers the composites one at a time, in
order), so no record it reads was learned on them.
Each stage then answers the validation composites in test mode, and the one worth most at the value of a
right answer wins (`worth_most`): accuracy × `answer_value_usd` less USD, per composite, the cheaper on a
tie. Fifty composites tell two stages apart by accuracy only by a wide margin, so a rule that chose the most
accurate bought noise at any price (a peer stage on records at six times the best model's cost for a lead
validation showed and the test did not); one that kept the cheapest unless a dearer stage led beyond its
95 % interval chose, on held-out MATH, a stage eight points behind to save 0.3 %. Read at the knob's value,
a dearer stage must earn its price, and one that costs the same wins on accuracy. What each scored is
written to `validation/choice.json` beside the benchmark's runs.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from reso.agents.adapters.release_text import split_recorded
from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.jobs.crm_fit import fit_skills, of_questions
from reso.evals.jobs.fine_stages import STAGE_LABELS, FineStage, stage_changes
from reso.evals.methods import parse_method
from reso.evals.reports.recordings import original_questions
from reso.evals.runner import run_eval
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import build_team
from reso.reward.labelled_records import LabelledRecord

VALIDATION_SHARE = 0.25
"""The share of the training composites (the last ones) that validation answers."""


def worth_most(scores: dict[FineStage, tuple[float, float]], value_usd: float, composites: int) -> tuple[FineStage, str]:
    """The stage whose (accuracy, USD) over `composites` gives the most accuracy × `value_usd` less USD per
    composite (the cheaper, then the earlier stage, on a tie); and why. An infinite value reads accuracy alone."""
    def worth(stage: FineStage) -> tuple[float, float, int]:
        accuracy, usd = scores[stage]
        net = accuracy if math.isinf(value_usd) else accuracy * value_usd - usd / max(composites, 1)
        return net, -usd, -list(FineStage).index(stage)

    return max(scores, key=worth), f"the most worth at ${value_usd:g} a right answer, net of its cost"


@dataclass(frozen=True)
class StageChoice:
    """The stage validation chose, and each stage's accuracy and cost on the validation composites."""

    stage: FineStage
    composites: int
    scores: dict[str, tuple[float, float]]
    """FineStage → (accuracy, USD) on the validation composites."""
    rule: str = ""

    @property
    def why(self) -> str:
        shown = "; ".join(f"{stage} {accuracy:.1%} for ${usd:.3f}" for stage, (accuracy, usd) in self.scores.items())
        return (f"chosen on {self.composites} validation composites of the training side ({shown}; {self.rule}): "
                f"the {STAGE_LABELS[self.stage]}")


def _key(text: str) -> str:
    return " ".join(split_recorded(text)[0].split())


def validation_part(train: Sequence[Problem]) -> list[Problem]:
    """The training composites validation answers: the last quarter (at least one)."""
    return list(train[-max(1, round(len(train) * VALIDATION_SHARE)):])


def validation_questions(problems: Sequence[Problem]) -> set[str]:
    """Every sub-question of `problems`, as asked after right parents and as written (linked), normalised."""
    texts: set[str] = set()
    for problem in problems:
        texts.update(_key(text) for text in original_questions(problem).values())
        texts.update(_key(step["instruction"]) for step in problem.plan or [])
    return texts


def without_questions(records: Sequence[LabelledRecord], questions: set[str]) -> list[LabelledRecord]:
    """The records whose question is none of `questions`."""
    return [r for r in records if _key(r.instruction) not in questions]


def snapshot_dadb(source: Path, target: Path) -> None:
    """Copy the agents' records of the DADB file `source` into a new DADB file `target` (replacing one there),
    written beside it and renamed into place, so a crash leaves no half snapshot."""
    from reso.agents.dadb.base import Mode
    from reso.agents.dadb.sqlite import DADB

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    for stale in target.parent.glob(partial.name + "*"):
        stale.unlink()
    trained, copy = DADB(source, mode=Mode.TEST), DADB(partial, mode=Mode.TRAIN)
    try:
        copy.load_stats(trained.all_stats())
    finally:
        trained.close()
        copy.close()
    for stale in target.parent.glob(target.name + "*"):  # the WAL files and profile index of an old one
        if stale != partial:
            stale.unlink()
    partial.replace(target)


def _run_stage(settings: ReSoSettings, dataset: str, problems: Sequence[Problem], out: Path,
               concurrency: int) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)  # a rerun refits the CRM: answers from an earlier fit would be stale
    team = build_team(settings)  # its own team: the process's cached one may hold another stage's scorer
    try:
        config = EvalConfig(dataset=dataset, method=parse_method("reso", team.pool), out=out, settings=settings,
                            run=RunOptions(concurrency=concurrency))
        summary = asyncio.run(run_eval(config, problems, team))
    finally:
        if team.dadb is not None:
            team.dadb.close()
    return float(summary["accuracy"]), float(summary["cost_usd"])


def choose_on_validation(test: ReSoSettings, train: Sequence[Problem], dataset: str, answers: Sequence[LabelledRecord],
                         run_records: Sequence[LabelledRecord], out: Path, *, concurrency: int = 16,
                         note: Callable[[str], None] = lambda line: None,
                         own: set[str] | None = None) -> StageChoice:
    """Fit the validation CRM, run every stage on the validation composites, and choose (module docstring).

    Args:
        test: ReSo's test settings without a scorer's stage (pool, DADB, k, k_max, …).
        train: The training composites, in order; `dataset` names them (for the run folders).
        answers: The pool's recorded, labelled answers to the training side's questions.
        run_records: The training run's labelled records (what the calibration learns from).
        out: The folder validation writes to (`<benchmark>/validation`).
        own: The question ids of the benchmark's own files, which the peer stages' error table is counted on
            (None: every answer's).
    """
    from reso.reward.training.calibration_fit import fit_calibration
    from reso.reward.training.small_crm_fit import fit_small_crm

    part = validation_part(train)
    held = validation_questions(part)
    kept = without_questions(answers, held)
    note(f"validation: {len(part)} composites; the CRM refitted on {len(kept)} of {len(answers)} recorded answers "
         "(none to their questions)")
    fit_small_crm(kept, tune=True).save(out / "crm-general")
    calibration = fit_calibration(f"small:{out / 'crm-general'}", without_questions(run_records, held))
    calibration.save(out / "crm-calibrated")
    own_kept = of_questions(kept, own)
    changes = stage_changes(f"calibrated:{out / 'crm-calibrated'}", own_kept, out, test.selection.embedder)
    if test.asking.skills:  # the question skills too, without the validation composites' questions
        test = test.replace({"asking.skills": fit_skills(own_kept, out / "skills", test.selection.embedder)})
    scores = {stage: _run_stage(test.replace(changes[stage]), dataset, part, out / f"run-{stage.replace(' ', '-')}",
                                concurrency) for stage in FineStage}
    best, rule = worth_most(scores, test.answer_value_usd, len(part))
    choice = StageChoice(best, len(part), {stage: score for stage, score in scores.items()}, rule)
    (out / "choice.json").write_text(json.dumps({**asdict(choice), "why": choice.why}, indent=2), encoding="utf-8")
    return choice
