"""`reso bench ceiling FOLDER`: how well a verifier of cheap answers must work for a router's frontier.

A router can only lie above the single models' hull where it knows, question by question, when the cheap
answer will do. The purest such router is a cascade: the cheap model answers each sub-question, a verifier
scores that answer, and below a threshold the strong model is asked too and its answer kept. This bench
replays that cascade on a finished `reso demo` benchmark folder (its test composites and their single-model
runs: each sub-question's recorded cost for each model, and the recordings' labels of whether each model's
answer to the source question is right) with verifiers of known quality:

- a synthetic verifier for each target AUC (`reso.evals.bench.synthetic_verifier`), one verdict per source
  question (a question met in several composites gets one): AUC 1 is a perfect verifier;
- with `--crm SPEC`, a real scorer reading the cheap model's recorded solution on its own (what a cascade's
  check can see before any second answer);
- with `--peer MODEL`, agreement: a second model answers every sub-question too (its recorded cost is added)
  and the cheap answer is kept when the two final answers agree.

The thresholds sweep the cascade's cost knob (every distinct score, thinned to `THRESHOLDS`). A router may
also answer everything with one model, so the router's hull is made of the cascade's points and the single
models' runs: its gain over the single models' hull is what the verifier adds, never below 0. It is read
with the frontier's figures and their intervals (`reso.evals.reports.frontier`: mean gain over the decade of
budgets below the best single model's cost, worst gap, QNC). The JSON keeps the delta method's intervals,
but a hull of many close points has steep, short segments where they break down, so the table shows values:
the spread across draws (other folders, other seeds) is the interval to read. A composite is right when every
sub-question is (the integration step is exact), as in the runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reso.agents.adapters.replay import split_replay_target
from reso.agents.adapters.replay_table import replay_correctness, replay_table
from reso.agents.pool_source import REPLAY_PREFIX
from reso.evals.bench.synthetic_verifier import VerifierQualityError, measured_auc, synthetic_verifier
from reso.evals.datasets import Problem
from reso.evals.reports.clusters import dataset_items
from reso.evals.reports.compare import Run, load_run
from reso.evals.reports.frontier import Frontier, frontier
from reso.reward.peer_errors import SAME_VALUE

__all__ = ["CeilingError", "DEFAULT_AUCS", "run_ceiling_bench"]

DEFAULT_AUCS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.7)
THRESHOLDS = 41
"""How many thresholds a cascade sweeps at most (quantiles of its scores, both ends included)."""
_SINGLE_PREFIX = "test-single-"
_INTEGRATION = "final"


class CeilingError(ValueError):
    """The folder is not a finished benchmark folder of `reso demo`, or a named model has no run in it."""


@dataclass(frozen=True)
class SingleModel:
    """One single-model test run of the folder: its run, the recorded model's name and replay files."""

    run: Run
    model: str
    replay_files: tuple[str, ...]


@dataclass(frozen=True)
class Composites:
    """The test composites: per item, its sub-questions' step ids and their source question ids."""

    items: list[str]
    steps: list[list[str]]
    questions: list[list[str]]

    @property
    def asked(self) -> set[str]:
        return {qid for questions in self.questions for qid in questions}


@dataclass(frozen=True)
class Graded:
    """A model on the composites, graded by the recordings' labels: right per source question, what it paid
    per sub-question (items × sub-questions) and for the rest of each item (the integration step)."""

    model: SingleModel
    right: dict[str, bool]
    paid: list[list[float]]
    rest: list[float]

    def run(self, composites: Composites) -> Run:
        """The model alone, as a run on the composites: right where every sub-question is."""
        rows = {item: {"id": item, "correct": all(self.right[q] for q in questions),
                       "usage": {"cost_usd": sum(paid) + rest}}
                for item, questions, paid, rest in zip(composites.items, composites.questions, self.paid,
                                                       self.rest, strict=True)}
        return Run(folder=self.model.run.folder, summary=self.model.run.summary, rows=rows)


@dataclass(frozen=True)
class Verifier:
    """A verifier of the cheap answers: its score per source question, and what checking each sub-question
    costs (per item, per sub-question; None: nothing, a scorer on this machine)."""

    name: str
    target_auc: float | None
    scores: dict[str, float]
    cost: list[list[float]] | None = None


def _single_models(folder: Path) -> list[SingleModel]:
    """Every `test-single-*` run of the folder, with the model and recordings its candidates name."""
    from reso.evals.portable import resolved_in

    found = []
    for path in sorted(folder.glob(_SINGLE_PREFIX + "*")):
        run = load_run(path)
        spec = next((c["model"] for row in run.rows.values() for step in row.get("steps") or []
                     for c in step.get("candidates") or [] if c.get("model")), None)
        if spec is None:
            raise CeilingError(f"{path}: no recorded candidate names its model")
        if not spec.startswith(REPLAY_PREFIX) or "#" not in spec:
            raise CeilingError(f"{path}: model {spec!r} is not a replay model; the bench reads recorded runs")
        files, model = split_replay_target(spec.removeprefix(REPLAY_PREFIX))
        found.append(SingleModel(run, model, tuple(resolved_in(path, f) for f in files)))
    if len(found) < 2:
        raise CeilingError(f"{folder}: fewer than two {_SINGLE_PREFIX}* runs (not a `reso demo` benchmark "
                           "folder)")
    return found


def _by_name(graded: Sequence[Graded], name: str, option: str) -> Graded:
    """The model `name`: its recorded name, its run folder's name after `test-single-`, or (when nothing is
    named so exactly) the start of one recorded name."""
    matches = [g for g in graded if name in (g.model.model, g.model.run.folder.name[len(_SINGLE_PREFIX):])]
    matches = matches or [g for g in graded if g.model.model.startswith(name)]
    if len(matches) != 1:
        known = ", ".join(g.model.model for g in graded)
        raise CeilingError(f"{option} {name!r}: {'no' if not matches else 'more than one'} single-model run "
                           f"matches (runs of: {known})")
    return matches[0]


def _pair(graded: Sequence[Graded], alone: Sequence[Run], cheap: str | None,
          strong: str | None) -> tuple[Graded, Graded]:
    """The named models; by default the strong one is the most accurate alone (`alone`: each graded model's
    run), and the cheap one the most accurate of those costing at most a fifth of the strong one."""
    figures = {id(g): (float(np.mean([bool(r["correct"]) for r in run.rows.values()])),
                       float(np.mean([r["usage"]["cost_usd"] for r in run.rows.values()])))
               for g, run in zip(graded, alone, strict=True)}
    high = _by_name(graded, strong, "--strong") if strong else max(
        graded, key=lambda g: (figures[id(g)][0], -figures[id(g)][1]))
    if cheap:
        low = _by_name(graded, cheap, "--cheap")
    else:
        cheaper = [g for g in graded if g is not high and figures[id(g)][1] <= figures[id(high)][1] / 5]
        if not cheaper:
            raise CeilingError(f"no single-model run costs a fifth of {high.model.model}'s; name --cheap")
        low = max(cheaper, key=lambda g: (figures[id(g)][0], -figures[id(g)][1]))
    if low is high:
        raise CeilingError("--cheap and --strong name the same model")
    return low, high


def _composites(problems: Mapping[str, Problem], runs: Sequence[Run], where: str) -> Composites:
    """The items every run answered, with their sub-questions' source question ids from the dataset."""
    items = sorted(set.intersection(set(problems), *(set(run.rows) for run in runs)))
    if not items:
        raise CeilingError(f"{where}: the single-model runs share no item of their dataset")
    steps, questions = [], []
    for item in items:
        named = (problems[item].meta or {}).get("step_question_ids") or {}
        sub_questions = [step for step in named if step != _INTEGRATION]
        if not sub_questions or not all(named[step] for step in sub_questions):
            raise CeilingError(f"{where}: dataset item {item} names no source question of its sub-questions "
                               "(meta.step_question_ids); the bench needs composites of recorded questions")
        steps.append(sub_questions)
        questions.append([named[step] for step in sub_questions])
    return Composites(items, steps, questions)


def _graded(model: SingleModel, composites: Composites) -> Graded:
    """`model` graded on the composites by the recordings' labels, with what its run paid."""
    paid, rest = [], []
    for item, steps in zip(composites.items, composites.steps, strict=True):
        by_step = {str(step["id"]): sum(float(c.get("cost_usd") or 0.0) for c in step.get("candidates") or [])
                   for step in model.run.rows[item].get("steps") or []}
        missing = [step for step in steps if step not in by_step]
        if missing:
            raise CeilingError(f"{model.run.folder}: item {item} has no step {missing[0]}")
        paid.append([by_step[step] for step in steps])
        rest.append(sum(cost for step, cost in by_step.items() if step not in steps))
    return Graded(model, _labels(model, composites.asked), paid, rest)


def _labels(model: SingleModel, questions: set[str]) -> dict[str, bool]:
    """Whether the recordings say `model` answered each source question right."""
    table: dict[tuple[str, str], bool] = {}
    for path in model.replay_files:
        table.update(replay_correctness(path))
    recorded = {qid for qid, _ in table}
    missing = sorted(questions - recorded)
    if missing:
        raise CeilingError(f"question {missing[0]}: not in the recordings {', '.join(model.replay_files)}")
    # A model with no recording of a question fails the call in a replayed run: wrong, as there.
    return {qid: table.get((qid, model.model), False) for qid in questions}


def _cascade_run(composites: Composites, cheap: Graded, strong: Graded, verifier: Verifier, threshold: float,
                 label: str) -> Run:
    """The cascade at one threshold, as a run on the composites: a cheap answer scored at least `threshold` is
    kept, else the strong model is asked too (the rest of each item is paid as the cheap model's run did)."""
    rows: dict[str, dict[str, Any]] = {}
    checks = verifier.cost or [[0.0] * len(questions) for questions in composites.questions]
    for i, (item, questions) in enumerate(zip(composites.items, composites.questions, strict=True)):
        right, spent = True, cheap.rest[i]
        for j, qid in enumerate(questions):
            spent += cheap.paid[i][j] + checks[i][j]
            if verifier.scores[qid] >= threshold:
                right &= cheap.right[qid]
            else:
                spent += strong.paid[i][j]
                right &= strong.right[qid]
        rows[item] = {"id": item, "correct": right, "usage": {"cost_usd": spent}}
    summary = {**cheap.model.run.summary, "method": label, "settings": {"threshold": threshold}}
    return Run(folder=cheap.model.run.folder.parent / f"{label}@{threshold:.4g}", summary=summary, rows=rows)


def _thresholds(scores: Mapping[str, float]) -> list[float]:
    """The cascade's knob: from asking the strong model on every sub-question to never (at most
    `THRESHOLDS`)."""
    values = np.unique(np.asarray(list(scores.values()), dtype=float))
    if len(values) > THRESHOLDS - 1:
        values = np.unique(np.quantile(values, np.linspace(0.0, 1.0, THRESHOLDS - 1)))
    return [math.inf, *values.tolist()]


def _figures(found: Frontier) -> dict[str, Any]:
    """The frontier's figures a row of the report keeps."""
    return {"mean_gain": found.mean_gain.__dict__, "worst_gap": found.worst_gap.__dict__,
            "qnc": found.qnc.__dict__, "hull": [[float(c), float(a)] for c, a in found.reso_hull]}


def run_ceiling_bench(folder: Path, *, cheap: str | None = None, strong: str | None = None,
                      aucs: Sequence[float] = DEFAULT_AUCS, crm: str | None = None, peer: str | None = None,
                      seed: int = 0, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The cascade's frontier figures on `folder`'s test composites for each verifier (module docstring).

    Raises:
        CeilingError: Not a benchmark folder of recorded runs, a named model has no run in it, or no verifier.
        CompareError: A run folder that cannot be read.
    """
    if not aucs and not crm and not peer:
        raise CeilingError("no verifier: give --auc, --crm or --peer")
    singles = _single_models(folder)
    problems = dataset_items([singles[0].run.summary], [singles[0].run.folder])
    if problems is None:
        dataset = singles[0].run.summary.get("dataset")
        raise CeilingError(f"{singles[0].run.folder}: its dataset ({dataset}) does not load")
    composites = _composites(problems, [s.run for s in singles], str(folder))
    graded = [_graded(s, composites) for s in singles]
    single_runs = [g.run(composites) for g in graded]
    low, high = _pair(graded, single_runs, cheap, strong)
    label = f"cascade:{low.model.model}>{high.model.model}"
    try:
        verifiers = [Verifier(f"synthetic AUC {target:g}", float(target),
                              synthetic_verifier(low.right, target, seed)) for target in aucs]
    except VerifierQualityError as error:
        raise CeilingError(f"--auc: {error}") from None
    if crm:
        verifiers.append(Verifier(f"crm {crm}", None, _crm_scores(crm, low.model, composites)))
    if peer:
        other = _by_name(graded, peer, "--peer")
        if other in (low, high):
            raise CeilingError("--peer must name a third model, not the cheap or the strong one")
        verifiers.append(Verifier(f"agreement with {other.model.model}", None,
                                  _agreement(low.model, other.model, composites), other.paid))
    asked = composites.asked
    report: dict[str, Any] = {"folder": str(folder), "cheap": low.model.model, "strong": high.model.model,
                              "composites": len(composites.items), "sub_questions": len(asked),
                              "cheap_right": float(np.mean([low.right[q] for q in asked])),
                              "strong_right": float(np.mean([high.right[q] for q in asked])),
                              "verifiers": []}
    for verifier in verifiers:
        if progress is not None:
            progress(f"cascade with {verifier.name}")
        cascades = [_cascade_run(composites, low, high, verifier, threshold, label)
                    for threshold in _thresholds(verifier.scores)]
        runs = [*single_runs, *cascades]
        found = frontier(runs, problems, router=[True] * len(runs))
        report.setdefault("best_single", found.best_single)
        report.setdefault("best_single_cost_usd", found.best_single_cost_usd)
        report["verifiers"].append({"verifier": verifier.name, "target_auc": verifier.target_auc,
                                    "auc": measured_auc(low.right, verifier.scores), **_figures(found)})
    return report


def _recordings(model: SingleModel, composites: Composites) -> dict[str, Any]:
    """`model`'s recording of each source question of the composites, by question id."""
    recordings = {rec.id: rec for path in model.replay_files for rec in replay_table(path).recordings}
    asked = sorted({qid for questions in composites.questions for qid in questions})
    missing = [qid for qid in asked if qid not in recordings]
    if missing:
        raise CeilingError(f"question {missing[0]}: not in the recordings {', '.join(model.replay_files)}")
    return {qid: recordings[qid] for qid in asked}


def _crm_scores(spec: str, cheap: SingleModel, composites: Composites) -> dict[str, float]:
    """`spec`'s score of the cheap model's recorded solution to each source question, read on its own (a
    solution it has no recording of is an empty answer)."""
    from reso.reward.base import ScoreItem
    from reso.reward.registry import build_scorer

    scorer = build_scorer(spec)
    recordings = _recordings(cheap, composites)
    # One group per answer: the verifier sees the lone solution, as a cascade's check would.
    items = [ScoreItem(subtask=rec.question, answer=rec.responses.get(cheap.model, ""), model=cheap.model,
                       agent_id=cheap.model, group=f"ceiling:{qid}") for qid, rec in recordings.items()]
    return {qid: score.value for qid, score in zip(recordings, scorer.score_detailed(items), strict=True)}


def _agreement(cheap: SingleModel, peer: SingleModel, composites: Composites) -> dict[str, float]:
    """1 where the peer's recorded final answer equals the cheap model's (to a millionth, as the composites
    grade), else 0."""
    from reso.reward.answers import answers_match, extract_answer

    ours, theirs = _recordings(cheap, composites), _recordings(peer, composites)
    agreement = {}
    for qid, rec in ours.items():
        mine = extract_answer(rec.responses.get(cheap.model, ""))
        other = extract_answer(theirs[qid].responses.get(peer.model, ""))
        agreement[qid] = float(mine is not None and other is not None
                               and answers_match(mine, other, rel_tol=SAME_VALUE))
    return agreement


def render_table(report: Mapping[str, Any]) -> Any:
    """The report as a rich table: one row per verifier."""
    from rich.table import Table

    from reso.evals.reports.formatting import estimate_text

    table = Table(title=f"cascade {report['cheap']} > {report['strong']} on {report['composites']} "
                        f"composites (best single: {report['best_single']})",
                  caption="values only: the delta method's intervals (in the JSON) break down on a hull of "
                          "many close points")
    for column in ("verifier", "AUC on these answers", "mean gain over the single models' hull, points",
                   "worst gap, points", "QNC"):
        table.add_column(column)
    for row in report["verifiers"]:
        auc = "—" if row["auc"] is None else f"{row['auc']:.3f}"
        table.add_row(row["verifier"], auc, estimate_text(row["mean_gain"]["value"], None, unit=""),
                      estimate_text(row["worst_gap"]["value"], None, unit=""),
                      estimate_text(row["qnc"]["value"], None, scale=1.0, signed=False, unit="×", digits=2,
                                    missing="not reached"))
    return table

