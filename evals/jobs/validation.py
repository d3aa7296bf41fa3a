"""Choosing ReSo's fine stage on a validation part of the training side: the test is never looked at.

The last quarter of the training composites is the validation part. The CRM the test uses learned from the
recorded answers to every training-side question, so on those composites it would judge answers it has
seen with their labels, and flatter every stage that reads it. So validation fits the CRM again without
any answer to a question of a validation composite (the general CRM on the other recorded answers, its
calibration on the training run's records of the other questions) and fits each stage's peer posterior on
the same answers. The trained DADB is read as it is: it keeps each agent's record, not what it answered.
Each stage then answers the validation composites in test mode on each cost scale (`CostScale`: a
candidate's price as a share of the dearest candidate's, or on a log scale between the cheapest and the
dearest) and the most accurate pair wins (the cheaper on a tie); then that pair answers them at each other
cost weight, and the most accurate weight wins the same way. What each scored is written to
`validation/choice.json` beside the benchmark's runs.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from reso.agents.adapters.release_text import split_recorded
from reso.agents.selection.config import CostScale
from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig
from reso.evals.jobs.fine_stages import Stage, stage_changes
from reso.evals.methods import parse_method
from reso.evals.reports.recordings import original_questions
from reso.evals.runner import run_eval
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import build_team
from reso.reward.records import LabelledRecord

VALIDATION_SHARE = 0.25
"""The share of the training composites (the last ones) that validation answers."""


@dataclass(frozen=True)
class StageChoice:
    """The fine stage, cost scale and cost weight validation chose, and what each tried setting scored on the
    validation composites."""

    stage: Stage
    cost_scale: CostScale
    cost_weight: float
    composites: int
    scores: dict[str, tuple[float, float]]
    """`setting_label(...)` → (accuracy, USD) on the validation composites, in the order they ran."""

    @property
    def label(self) -> str:
        return setting_label(self.stage, self.cost_scale, self.cost_weight)

    @property
    def why(self) -> str:
        shown = "; ".join(f"{label} {accuracy:.1%} for ${usd:.3f}" for label, (accuracy, usd) in self.scores.items())
        return f"chosen on {self.composites} validation composites of the training side ({shown}): {self.label}"


def setting_label(stage: Stage, scale: CostScale, weight: float) -> str:
    """How validation names what it tried: `peer on records, log cost scale, cost weight 1`."""
    return f"{stage}, {scale} cost scale, cost weight {weight:g}"


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


def _run_stage(settings: ReSoSettings, dataset: str, problems: Sequence[Problem], out: Path,
               concurrency: int) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)  # a rerun refits the CRM: answers from an earlier fit would be stale
    team = build_team(settings)  # its own team: the process's cached one may hold another stage's scorer
    try:
        config = EvalConfig(dataset=dataset, method=parse_method("reso", team.pool), out=out, settings=settings,
                            concurrency=concurrency)
        summary = asyncio.run(run_eval(config, problems, team))
    finally:
        if team.dadb is not None:
            team.dadb.close()
    return float(summary["accuracy"]), float(summary["cost_usd"])


def choose_on_validation(test: ReSoSettings, train: Sequence[Problem], dataset: str, answers: Sequence[LabelledRecord],
                         run_records: Sequence[LabelledRecord], out: Path, *, weights: Sequence[float] = (1.0,),
                         concurrency: int = 16, note: Callable[[str], None] = lambda line: None) -> StageChoice:
    """Fit the validation CRM, run the settings below on the validation composites, and choose (module
    docstring).

    Args:
        test: ReSo's test settings without a scorer's stage (pool, DADB, k, k_max, …).
        train: The training composites, in order; `dataset` names them (for the run folders).
        answers: The pool's recorded, labelled answers to the training side's questions.
        run_records: The training run's labelled records (what the calibration learns from).
        out: The folder validation writes to (`<benchmark>/validation`).
        weights: The cost weights to try; every stage on each cost scale runs at the first, and the winner at
            each other.
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
    changes = stage_changes(f"calibrated:{out / 'crm-calibrated'}", kept, out, int(test.k_max or test.k))
    scores: dict[str, tuple[float, float]] = {}

    def run(stage: Stage, scale: CostScale, weight: float) -> None:
        label = setting_label(stage, scale, weight)
        settings = test.replace(**changes[stage], cost_scale=scale, cost_weight=weight)
        folder = out / ("run-" + "".join(ch if ch.isalnum() or ch in ".-" else "-" for ch in label))
        scores[label] = _run_stage(settings, dataset, part, folder, concurrency)

    def ranked(setting: tuple[Stage, CostScale, float]) -> tuple[float, float]:
        accuracy, usd = scores[setting_label(*setting)]
        return accuracy, -usd

    # Two rounds, so that fewer settings compete on a few dozen composites: every stage on each cost scale at
    # the first weight, then the other weights with the winning stage and scale.
    pairs = [(stage, scale, weights[0]) for stage in Stage for scale in CostScale]
    for setting in pairs:
        run(*setting)
    stage, scale, _ = max(pairs, key=ranked)
    settings = [(stage, scale, weight) for weight in weights]
    for setting in settings[1:]:
        run(*setting)
    choice = StageChoice(*max(settings, key=ranked), composites=len(part), scores=scores)
    (out / "choice.json").write_text(json.dumps({**asdict(choice), "why": choice.why}, indent=2), encoding="utf-8")
    return choice
