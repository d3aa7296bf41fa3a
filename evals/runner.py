"""Batch evaluation: one method over one dataset, concurrent, resumable, appended item by item.

`DIR/results.jsonl` gets one line per finished item (answer, correctness, usage, every subtask and
candidate); `DIR/summary.json` the totals with the settings, seed, command line and package versions;
in training mode every line also carries its candidates as labelled CRM records, gathered into
`DIR/crm_records.jsonl` at the end (the `{instruction, answer, label}` format `reso crm train` reads).

Training updates the DADB exactly once per item, across crashes and resumes: the run context's
learner (`reso.graphs.learning.Learner`, learning once) keeps the subtasks from writing as they go; each
line carries its item's updates, rebuilt from the item's records, and is written before they are applied
under the key `RUN_ID/ITEM_ID` (see `reso.evals.ledger`). Budgets per run (tokens, USD, wall time) are checked before every call: once one is
spent, no item starts and the calls of items in flight are refused; those items are not written (they
run again on a rerun with a higher budget, their calls served from the response cache), and
`summary.json` says why the run `stopped`.
"""

from __future__ import annotations

import asyncio
import json
import platform
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from reso.agents.adapters.failures import FailureKind
from reso.agents.dadb.base import Mode
from reso.agents.dadb.url import redact
from reso.agents.profiles import model_name
from reso.evals.backends.base import Backend, InProcess
from reso.evals.batch_gc import batch_collector
from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig
from reso.evals.ledger import item_key, reconcile, run_id
from reso.evals.method_kind import MethodKind
from reso.evals.methods import MethodError
from reso.evals.portable import portable_command, portable_text
from reso.evals.provenance import Provenance
from reso.evals.reports.clusters import resampling
from reso.evals.reports.shared_questions import accuracy_interval as cluster_accuracy_interval
from reso.evals.reports.stats import wilson_interval
from reso.evals.results import ResultsFile
from reso.graphs.budget import RUN_SCOPE, Budget
from reso.graphs.context import RunContext
from reso.graphs.learning import Learner
from reso.graphs.run_records import Result, RunStatus
from reso.graphs.team import Team
from reso.reward.answers import answers_match, check_answer
from reso.reward.base import scorer_failures

PACKAGES = ("reso-langgraph", "langgraph", "langchain-core", "langchain-openai", "torch", "transformers",
            "sentence-transformers", "faiss-cpu", "math-verify", "scikit-learn")


def crm_records(problem: Problem, result: Result) -> list[dict[str, Any]]:
    """Every candidate of every subtask with a known reference, labelled right (1) or wrong (0). A subtask with
    a parent answered wrong is left out: its reference assumes right parents (a replay model answers it with
    its recording of the original sub-question, which that reference would call right)."""
    references = problem.step_references()
    values = {step.id: step.value for step in result.steps}
    records = []
    for step in result.steps:
        reference = references.get(step.id)
        if reference is None or any(  # exactly, as the link computes with it (`DagRun.sound_context`)
                parent in references and not answers_match(values.get(parent), references[parent], rel_tol=1e-6)
                for parent in step.depends_on):
            continue
        context = "\n".join(f"Answer[{parent}] = {next((s.value for s in result.steps if s.id == parent), None)}"
                            for parent in step.depends_on)
        for candidate in step.candidates:
            if candidate.error:
                continue
            records.append({
                "instruction": step.instruction, "answer": candidate.answer,
                "label": int(check_answer(candidate.answer, reference, rel_tol=problem.rel_tol)),
                "context": context, "agent_id": candidate.agent_id, "model": model_name(candidate.model),
                "question_id": f"{problem.id}/{step.id}", "reference": reference,
            })
    return records


def _candidate_json(candidate: Any, folder: Path | None) -> dict[str, Any]:
    """A candidate as its line holds it: its model's spec and its error without this machine's paths
    (`reso.evals.portable`, relative to the run folder `folder`)."""
    data: dict[str, Any] = candidate.model_dump(exclude={"answer"})
    if folder is not None:
        for key in ("model", "error"):
            if isinstance(data.get(key), str):
                data[key] = portable_text(data[key], folder)
    return data


def result_row(problem: Problem, result: Result, *, mode: str, folder: Path | None = None) -> dict[str, Any]:
    """The results.jsonl line of one item (written into the run folder `folder`: its paths relative to it)."""
    references = problem.step_references()
    row = {
        "id": problem.id,
        "reference": problem.answer,
        "answer": result.answer,
        "correct": answers_match(result.answer, problem.answer, rel_tol=problem.rel_tol),
        "status": result.status,
        "usage": result.usage.to_json(),
        "latency_s": result.latency_s,
        "steps": [
            {"id": step.id, "agent": step.agent, "value": step.value, "status": step.status,
             "depends_on": list(step.depends_on),
             "reference": references.get(step.id),
             "correct": (answers_match(step.value, references[step.id], rel_tol=problem.rel_tol)
                         if step.id in references else None),
             "domain": (problem.meta.get("step_domains") or {}).get(step.id),
             "candidates": [_candidate_json(c, folder) for c in step.candidates]}
            for step in result.steps
        ],
        "notes": result.notes,
    }
    if mode == Mode.TRAIN:
        row["crm_records"] = crm_records(problem, result)
    return row


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


WILSON = "Wilson (items independent)"


def accuracy_interval(rows: Sequence[dict[str, Any]], problems: Sequence[Problem]) -> tuple[list[float] | None, str]:
    """The accuracy's 95 % interval and how it was computed: cluster-robust by source question where the
    items share one (as every comparison of the run computes it), else Wilson's."""
    plan = resampling({problem.id: problem for problem in problems}, [str(row["id"]) for row in rows])
    correct = [bool(row["correct"]) for row in rows]
    if plan.clusters is not None:
        return cluster_accuracy_interval(correct, plan.clusters), plan.method
    return wilson_interval(sum(correct), len(correct)), WILSON


def summarise(config: EvalConfig, rows: Sequence[dict[str, Any]], wall_s: float,
              stopped: str | None, *, items: int | None = None, problems: Sequence[Problem] = ()) -> dict[str, Any]:
    n = len(rows)
    correct = sum(1 for row in rows if row["correct"])
    interval, interval_method = accuracy_interval(rows, problems)
    tokens = sum(row["usage"]["total_tokens"] for row in rows)
    cost = sum(row["usage"]["cost_usd"] for row in rows)
    folder = config.out
    return {
        # Paths relative to the run folder or the package (`reso.evals.portable`): none of this machine's.
        "dataset": portable_text(config.dataset, folder),
        "method": config.method.name,
        "method_label": config.method.label,
        "mode": config.settings.mode,
        "n": n,
        "correct": correct,
        "accuracy": correct / n if n else 0.0,
        "accuracy_ci95": interval,
        "interval_method": interval_method,
        "total_tokens": tokens,
        "tokens_per_item": tokens / n if n else 0.0,
        "cost_usd": cost,
        "cost_per_item_usd": cost / n if n else 0.0,
        "latency_s": sum(row["latency_s"] for row in rows) / n if n else 0.0,
        "wall_s": wall_s,
        "failed_items": sum(1 for row in rows if row["status"] != RunStatus.DONE),
        "scorer_failures": scorer_failures(c for row in rows for step in row["steps"] for c in step["candidates"]),
        "stopped": stopped,
        "items": items if items is not None else n,
        "items_left": (items - n) if items is not None else 0,
        "budget": {"usd": config.run.budget_usd, "tokens": config.run.budget_tokens,
                   "seconds": config.run.budget_seconds},
        "seed": config.settings.seed,
        # A database URL's password never reaches the summary (nor the reports read from it).
        "settings": {k: portable_text(redact(v), folder) if isinstance(v, str) else v
                     for k, v in config.settings.values().items()},
        "command": [redact(arg) for arg in portable_command(config.command, folder)],
        "versions": _versions(),
    }


ProgressCallback = Callable[[dict[str, Any]], None]


def _run_budget(config: EvalConfig, rows: Sequence[dict[str, Any]]) -> Budget:
    """The run-level budget, starting from what the lines already written cost (wall time: this process)."""
    return Budget(max_tokens=config.run.budget_tokens, max_usd=config.run.budget_usd,
                  max_seconds=config.run.budget_seconds,
                  tokens=sum(row["usage"]["total_tokens"] for row in rows),
                  usd=sum(row["usage"]["cost_usd"] for row in rows), scope=RUN_SCOPE)


def _cut_by_run_budget(result: Result) -> bool:
    return any(c.failure is FailureKind.RUN_BUDGET_EXCEEDED for step in result.steps for c in step.candidates)


async def run_eval(config: EvalConfig, problems: Sequence[Problem], team: Team,
                   progress: ProgressCallback | None = None, backend: Backend | None = None,
                   on_start: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run `config.method` on `problems` (skipping those already in the results file); returns the summary.
    `backend` answers the questions (default: this process; `reso.evals.backends`); this process alone
    writes the results and applies the learning. `on_start` is called once nothing refuses the run (the
    method checked against the team, the results folder claimed), before any item runs.

    Raises:
        MethodError: The method cannot run with this team (vote:K on a DADB without records), or a test run
            other than the oracle would show the CRM the references; nothing written.
        ResultsBusyError, ResultsFormatError: The results folder is another run's, or in use.
    """
    settings = config.settings.with_changes(config.method.overrides, where=f"method {config.method.name}")
    if settings.reward.sees_reference and settings.mode == Mode.TEST and config.method.kind is not MethodKind.ORACLE:
        raise MethodError(f"{config.method.name}: reward.sees_reference hands the references to the CRM, which "
                          "only the oracle baseline may do in a test run")
    adapted = config.method.adapt(team, seed=settings.seed)
    config.out.mkdir(parents=True, exist_ok=True)
    learner = Learner.for_run(settings, adapted.selector)
    run = run_id(config.out)
    started = time.monotonic()
    stopped: str | None = None
    provenance = Provenance.of_run(method=config.method.name, dataset=config.dataset, settings=settings,
                                   pool=team.pool, problems=problems, out=config.out)
    with ResultsFile(config.out / "results.jsonl", provenance=provenance) as results:
        if on_start is not None:
            on_start()
        await asyncio.to_thread(reconcile, learner, run, list(results.rows()))
        todo = [p for p in problems if p.id not in results.done]
        semaphore = asyncio.Semaphore(max(1, config.run.concurrency))
        lock = asyncio.Lock()
        budget = _run_budget(config, list(results.rows()))
        context = RunContext(settings=settings, team=adapted, budget=budget, learner=learner)
        solver = (backend or InProcess()).solver(config, context)

        async def one(problem: Problem) -> None:
            nonlocal stopped
            async with semaphore:
                if (reason := budget.stop()) is not None:
                    stopped = stopped or reason
                    return
                needs_truth = settings.mode == Mode.TRAIN or settings.reward.sees_reference
                references = problem.step_references() if needs_truth else None
                result = await solver.solve(problem, references)
                if _cut_by_run_budget(result):
                    # Partial because the run ran out, not because of the item: leave it for a rerun.
                    stopped = stopped or budget.exceeded
                    return
                row = result_row(problem, result, mode=settings.mode, folder=config.out)
                updates = learner.pending(result.steps)
                if updates is not None:
                    row["dadb_updates"] = [list(update) for update in updates]
                async with lock:
                    # The append fsyncs: off the event loop, so other questions keep moving meanwhile.
                    await asyncio.to_thread(results.append, row)
                if updates is not None:
                    await asyncio.to_thread(learner.apply, item_key(run, problem.id), updates)
                if progress is not None:
                    progress(row)

        with batch_collector():
            async with solver:
                await asyncio.gather(*(one(problem) for problem in todo))
        rows = [row for p in problems if (row := results.done.get(p.id)) is not None]
    summary = summarise(config, rows, time.monotonic() - started, stopped, items=len(problems), problems=problems)
    (config.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    if settings.mode == Mode.TRAIN:
        with (config.out / "crm_records.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                for record in row.get("crm_records", []):
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return summary
