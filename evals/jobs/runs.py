"""One run of the main job (a method on a split, into its own folder, resuming what the folder holds), and the
runs of one benchmark in the order they come: the plan its progress shows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reso.agents.dadb.base import Mode
from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.jobs.config import DemoConfig
from reso.evals.jobs.events import DemoProgress, PlannedRun, RunStart
from reso.evals.jobs.fine_stages import STAGE_LABELS, FineStage
from reso.evals.methods import parse_method
from reso.evals.reports.report import write_run_report
from reso.evals.runner import run_eval
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, team_for

# How progress names the two training-mode runs (the test runs go by their table labels).
TRAINING_RUN = "reso (training)"
STAGED_PASS = "reso (staged pass)"


def resumed(run_dir: Path, problems: Sequence[Problem]) -> list[dict[str, Any]]:
    """The rows of `problems` that `run_dir` holds already (a run resuming there skips them); none when its
    results file cannot be read (the run itself then says why)."""
    from reso.evals.results import ResultsFormatError, finished_rows

    try:
        rows = finished_rows(run_dir / "results.jsonl")
    except (OSError, UnicodeDecodeError, ResultsFormatError):
        return []
    return [row for problem in problems if (row := rows.get(problem.id)) is not None]


def run_method(config: DemoConfig, dataset: str, method: str, run_dir: Path, settings: ReSoSettings,
               problems: Sequence[Problem], progress: DemoProgress, benchmark: str, label: str | None = None,
               team: Team | None = None, pause: tuple[int, Callable[[], None]] | None = None) -> dict[str, Any]:
    """Answer `problems` with `method` into `run_dir` (skipping the rows it holds already), write the run's
    report, and return its summary; `progress` hears the start, each item and the end. `pause` = (n, then):
    answer the first n problems, call `then`, answer the rest (a training run that validation snapshots)."""
    done = resumed(run_dir, problems)
    run = RunStart(benchmark=benchmark, label=label or method, dataset=dataset, mode=settings.mode,
                   folder=run_dir, items=len(problems), done=len(done),
                   correct=sum(bool(row["correct"]) for row in done),
                   cost_usd=sum(row["usage"]["cost_usd"] for row in done))
    progress.run_started(run)  # before the team is built: the first build (models, embedder) takes a while
    team = team or team_for(settings)
    concurrency = config.training_concurrency if settings.mode == Mode.TRAIN else config.concurrency
    eval_config = EvalConfig(dataset=dataset, method=parse_method(method, team.pool), out=run_dir,
                             settings=settings, run=RunOptions(concurrency=concurrency))
    if pause is not None:
        asyncio.run(run_eval(eval_config, problems[:pause[0]], team, progress=progress.item_done,
                             backend=config.backend))
        pause[1]()
    summary = asyncio.run(run_eval(eval_config, problems, team, progress=progress.item_done,
                                   backend=config.backend))
    write_run_report(run_dir)
    progress.run_finished(run, summary)
    return {**summary, "run": run_dir.name}


def run_table_row(config: DemoConfig, dataset: str, problems: Sequence[Problem], out: Path,
                  run: tuple[str, str, str, ReSoSettings], progress: DemoProgress,
                  benchmark: str) -> dict[str, Any]:
    """One test run of the table, its summary labelled as the table names it."""
    label, method, folder, settings = run
    summary = run_method(config, dataset, method, out / folder, settings, problems, progress, benchmark,
                         label=label)
    if label != method:  # the reports and plots name the variant as the table does
        summary = {**summary, "run_label": label}
        (out / folder / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return {**summary, "label": label}


def run_folder(method: str) -> str:
    """The folder of a test run under its benchmark's: `test-` and the method, made safe for a file name."""
    return "test-" + "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in method)


def value_label(value: float) -> str:
    """How the tables name the ReSo run of the frontier's sweep at `value` USD per right answer."""
    return f"reso (answer worth ${value:g})"


def crm_runs(config: DemoConfig, stage: FineStage = FineStage.CRM,
             stages: Mapping[FineStage, dict[str, Any]] | None = None) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The test runs that use the fitted CRM, in the order they run: (label, method, run folder, changes to
    ReSo's test settings, which use the fine stage `stage`): the ReSo row, the frontier's sweep of the value
    of a right answer, the other variants; then ReSo with each other fine stage (`stages`: each stage's
    changes, known once the CRM is fitted); random selects agents at random, and the CRM keeps their answers."""
    runs: list[tuple[str, str, str, dict[str, Any]]] = [("reso", "reso", "test-reso", {})]
    runs += [(value_label(value), "reso", run_folder(f"reso value {value:g}"), {"answer_value_usd": value})
             for value in config.answer_values]
    runs += [(f"reso ({label})", "reso", run_folder(f"reso {label}"), changes)
             for label, changes in config.reso_variants.items()]
    runs += [(f"reso ({STAGE_LABELS[other]})", "reso", run_folder(f"reso {STAGE_LABELS[other]}"),
              (stages or {}).get(other, {})) for other in FineStage if other != stage]
    return [*runs, ("random", "random", run_folder("random"), {})]


def plan_runs(config: DemoConfig, out: Path, train: Sequence[Problem], test: Sequence[Problem],
              baselines: Sequence[str], stage: FineStage = FineStage.CRM) -> list[PlannedRun]:
    """Every run of a benchmark in the order it runs, each with the items its folder holds already."""
    def planned(folder: str, label: str, mode: str, problems: Sequence[Problem]) -> PlannedRun:
        return PlannedRun(folder, label, mode, len(problems), len(resumed(out / folder, problems)))

    runs = [planned("train-reso", TRAINING_RUN, Mode.TRAIN, train)]
    runs += [planned(run_folder(method), method, Mode.TEST, test) for method in baselines]
    if config.crm == "staged":  # the pass starts over every time
        runs.append(PlannedRun("train-staged", STAGED_PASS, Mode.TRAIN, len(train)))
    return runs + [planned(folder, label, Mode.TEST, test) for label, _, folder, _ in crm_runs(config, stage)]
