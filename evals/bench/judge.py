"""`reso bench judge`: how well the signals judge picks among K models' recorded answers, beside the votes.

The judge (`reso.reward.signals_judge`) is fitted on the training files' labelled answers only, the team
being the K models; on every test question it scores the K recorded answers and its pick is the most likely
one. Beside it, on the same questions: the best fixed model (the best training record among the K), the
plurality of the K (a tie goes to the group holding the best-recorded model), the reliability-weighted vote
(`reliability`: each model's training record as its weight) and the oracle (right when any of the K is: a
bound that reads the labels). By default the K models are the best training records, among a pool file's
models when one is named (`--pool agents/data/open_pool.yaml`: the open-weight models). Each accuracy has its Wilson interval; the judge's gain over the plurality
and over the best fixed model has its paired bootstrap interval. The judge's probabilities are graded over
every test answer: AUC (does a right answer score above a wrong one) and the expected calibration error
(ten equal bins). A test question that is also a training question is refused, as is a named model the
files never recorded.

How good would a verifier of the answers have to be? With `--verifier-auc A,…` (and `--verifier-crm SPEC`)
the bench adds, beside the judge, the vote weighted by a verifier: the reliability vote with each answer's
log-odds replaced by the verifier's verdict (a synthetic verifier's log-likelihood ratio, the CRM's logit), so
that agreeing answers add their evidence and a doubted answer counts against its group. The verifiers are
synthetic ones of each AUC on these very answers (`reso.evals.bench.synthetic_verifier`) and the CRM reading
each solution alone, each with its accuracy, its difference from the plurality (paired bootstrap) and its
AUC.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reso.reward.labelled_records import LabelledRecord
from reso.reward.training.signals_judge_fit import AnsweredQuestions

METHODS = ("judge", "best_fixed", "plurality", "weighted_vote", "oracle")
DEFAULT_MODELS = 5
COVERAGE = 0.9
"""A model chosen by default must have recorded answers to this share of the training questions."""
ECE_BINS = 10
AGREEMENT = math.log(1.0 / 0.2)
"""What each agreeing answer beyond the first adds to a verifier-weighted vote: ln(1 / q), two wrong answers
coinciding with q = 0.2, as in the reliability vote (`reso.reward.reliability_vote`), whose log-odds of each
answer the verifier's verdicts replace."""


class JudgeBenchError(ValueError):
    """Bad input to the bench: a message naming the file or model."""


def _load(paths: Sequence[Path], option: str) -> list[LabelledRecord]:
    from reso.reward.labelled_records import RecordFormatError, load_record_files

    if not paths:
        raise JudgeBenchError(f"{option}: name at least one file")
    for path in paths:
        if not Path(path).is_file():
            raise JudgeBenchError(f"{option} {path}: no such file")
    try:
        return load_record_files([str(p) for p in paths])
    except RecordFormatError as error:
        raise JudgeBenchError(str(error)) from error


def choose_models(train: AnsweredQuestions, test: AnsweredQuestions, models: Sequence[str] | None, count: int,
                  allowed: set[str] | None = None) -> list[str]:
    """The named models (each recorded on both sides), or the `count` best training records among the models
    (of `allowed`, when given) that answered at least COVERAGE of the training questions and some test
    question."""
    recorded, tested = set(train.models), set(test.models)
    if models:
        for model in models:
            if model not in recorded or model not in tested:
                side = "training" if model not in recorded else "test"
                raise JudgeBenchError(f"--models: {model!r} has no recorded answer on the {side} side")
        return list(models)
    eligible = [m for m in recorded & tested if train.coverage(m) >= COVERAGE and (allowed is None or m in allowed)]
    if len(eligible) < 2:
        raise JudgeBenchError("fewer than two models answered 90 % of the training questions: name them with "
                              "--models")
    return sorted(eligible, key=lambda m: (-train.record(m)[0], m))[:count]


def _pool_models(path: Path) -> set[str]:
    """The model names of the pool file `path` (a replay model's name is its recorded model's)."""
    from reso.agents.pool import PoolError, load_pool

    try:
        return {agent.model.model_name for agent in load_pool(path)}
    except (OSError, PoolError) as error:
        raise JudgeBenchError(f"--pool: {error}") from error


def _pick(scores: Sequence[float], ranks: Sequence[int]) -> int:
    """The index of the highest score; a tie goes to the better-ranked model (lower rank)."""
    return max(range(len(scores)), key=lambda i: (scores[i], -ranks[i]))


def expected_calibration_error(probabilities: np.ndarray, labels: np.ndarray, bins: int = ECE_BINS) -> float:
    """Mean |share right − mean probability| over equal-width probability bins, weighted by their answers."""
    edges = np.minimum((probabilities * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            total += inside.sum() * abs(labels[inside].mean() - probabilities[inside].mean())
    return float(total / max(len(labels), 1))


def _score_question(judge: Any, voter: Any, answers: dict[str, LabelledRecord], team: Sequence[str],
                    train: AnsweredQuestions, key: str) -> tuple[dict[str, bool], list[tuple[float, int]]]:
    """Each method's verdict on one test question, and the judge's (probability, label) of each answer."""
    from reso.reward.base import ScoreItem

    present = [m for m in team if m in answers]
    verdict = {method: False for method in METHODS}
    verdict["best_fixed"] = bool(team[0] in answers and answers[team[0]].label)
    if not present:
        return verdict, []
    items = [ScoreItem(subtask=answers[m].instruction, answer=answers[m].answer, agent_id=m, model=m,
                       group=key, record=train.record(m)) for m in present]
    ranks = [team.index(m) for m in present]
    labels = [answers[m].label for m in present]
    judged = [s.value for s in judge.score_detailed(items)]
    verdict["judge"] = bool(labels[_pick(judged, ranks)])
    verdict["weighted_vote"] = bool(labels[_pick(voter.score(items), ranks)])
    verdict["plurality"] = bool(labels[_plurality(items, ranks)])
    verdict["oracle"] = any(labels)
    return verdict, list(zip(judged, labels, strict=True))


def _plurality(items: Sequence[Any], ranks: Sequence[int]) -> int:
    return _weighted_vote(items, ranks, [1.0] * len(items))


def run_judge_bench(train_paths: Sequence[Path], test_paths: Sequence[Path], *, models: Sequence[str] | None = None,
                    count: int = DEFAULT_MODELS, pool: Path | None = None, embedder: str = "minilm",
                    crm: str | None = None, verifier_aucs: Sequence[float] = (), verifier_crm: str | None = None,
                    seed: int = 0,
                    progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """The bench's report (module docstring): `rows`, `auc`, `ece`, `n` and what it ran on.

    Raises:
        JudgeBenchError: A missing or malformed file, a model not recorded, or test questions in training.
    """
    from reso.agents.selection.embeddings import load_embedder
    from reso.reward.registry import build_scorer
    from reso.reward.reliability_vote import ReliabilityVoteScorer
    from reso.reward.training.signals_judge_fit import fit_signals_judge

    train_records, test_records = _load(train_paths, "--train-questions"), _load(test_paths, "--test-questions")
    train, test = AnsweredQuestions.of(train_records), AnsweredQuestions.of(test_records)
    shared = {" ".join(t.split()) for t in train.texts} & {" ".join(t.split()) for t in test.texts}
    if shared:
        raise JudgeBenchError(f"{len(shared)} test questions are also training questions: the bench needs "
                              "questions the judge never saw")
    team = choose_models(train, test, models, count, _pool_models(pool) if pool is not None else None)
    scorer = build_scorer(verifier_crm) if verifier_crm else None  # a bad spec fails before the judge's fit
    progress(f"fitting the judge on {len(train.answers)} training questions ({len(train_records)} answers); "
             f"team: {', '.join(team)}")
    judge = fit_signals_judge(train_records, load_embedder(embedder), team=team,
                              base=build_scorer(crm) if crm else None, base_spec=crm or "", seed=seed)
    voter = ReliabilityVoteScorer()
    correct: dict[str, list[bool]] = {method: [] for method in METHODS}
    graded: list[tuple[float, int]] = []
    for key, answers in zip(test.keys, test.answers, strict=True):
        verdict, pairs = _score_question(judge, voter, answers, team, train, key)
        for method in METHODS:
            correct[method].append(verdict[method])
        graded.extend(pairs)
    report = _report(correct, graded, team, len(train.answers))
    if verifier_aucs or verifier_crm:
        progress("votes weighted by verifiers of the answers")
        report["verifiers"] = _verifier_votes(test, team, verifier_aucs, scorer, verifier_crm,
                                              correct["plurality"], seed)
    return report


def _verifier_votes(test: AnsweredQuestions, team: Sequence[str], aucs: Sequence[float], scorer: Any,
                    spec: str | None, plurality: Sequence[bool], seed: int) -> list[dict[str, Any]]:
    """For each verifier (a synthetic one per AUC, then `scorer` reading each answer alone): the accuracy of
    the vote weighted by it (the reliability vote with each answer's log-odds its verdict: each group of
    agreeing answers scores the sum of its verdicts plus `AGREEMENT` per answer beyond the first; the best
    group's best-ranked answer is picked) and its difference from the plurality, with intervals."""
    from reso.evals.bench.synthetic_verifier import VerifierQualityError, measured_auc, synthetic_verifier
    from reso.evals.reports.stats import paired_bootstrap, wilson_interval
    from reso.reward.base import ScoreItem
    from reso.reward.calibrated_crm import logit

    answers = {(key, model): found[model] for key, found in zip(test.keys, test.answers, strict=True)
               for model in team if model in found}
    right = {pair: bool(record.label) for pair, record in answers.items()}
    verifiers: list[tuple[str, float | None, dict[tuple[str, str], float]]] = []
    try:
        verifiers += [(f"synthetic AUC {auc:g}", float(auc), synthetic_verifier(right, auc, seed)) for auc in aucs]
    except VerifierQualityError as error:
        raise JudgeBenchError(f"--verifier-auc: {error}") from None
    if scorer is not None:
        pairs = list(answers)
        # One group per answer: the CRM reads each solution alone, so agreement is counted once, by the vote.
        items = [ScoreItem(subtask=answers[p].instruction, answer=answers[p].answer, agent_id=p[1], model=p[1],
                           group=f"{p[0]}#{p[1]}") for p in pairs]
        # Its probabilities as log-odds, so that agreeing answers add their evidence as the synthetic ones do.
        verifiers.append((f"crm {spec}", None, {pair: logit(p) for pair, p in zip(pairs, scorer.score(items),
                                                                                  strict=True)}))
    questions = [(key, found, [m for m in team if m in found]) for key, found in zip(test.keys, test.answers,
                                                                                      strict=True)]
    ballots = {key: [ScoreItem(subtask=found[m].instruction, answer=found[m].answer, model=m) for m in present]
               for key, found, present in questions}
    rows = []
    for name, target, scores in verifiers:
        picked = []
        for key, found, present in questions:
            if not present:
                picked.append(False)
                continue
            choice = _weighted_vote(ballots[key], [team.index(m) for m in present],
                                    [scores[(key, m)] for m in present], agreement=AGREEMENT)
            picked.append(bool(found[present[choice]].label))
        n = len(picked)
        matrix = np.asarray([picked, plurality], dtype=float)
        paired = paired_bootstrap(matrix, np.ones_like(matrix), reference=1)[0]
        rows.append({"verifier": name, "target_auc": target, "auc": measured_auc(right, scores),
                     "accuracy": sum(picked) / n if n else math.nan, "ci95": wilson_interval(sum(picked), n),
                     "minus_plurality": {"points": 100 * paired.accuracy_diff,
                                         "ci95": [100 * v for v in paired.accuracy_diff_ci95 or [math.nan] * 2]}})
    return rows


def _weighted_vote(items: Sequence[Any], ranks: Sequence[int], scores: Sequence[float],
                   agreement: float = 0.0) -> int:
    """The index of the best-ranked answer of the group of agreeing answers that scores highest: the sum of
    its answers' scores plus `agreement` for each answer beyond the first (a tie goes to the group holding the
    better-ranked model); the best-ranked answer when none has a final value."""
    from reso.reward.answers import extract_answer
    from reso.reward.signals_judge import agreeing_groups

    groups = agreeing_groups([extract_answer(item.answer) for item in items], [item.model for item in items])
    if not groups:
        return min(range(len(items)), key=lambda i: ranks[i])
    best = max(groups, key=lambda g: (sum(scores[i] for i in g) + agreement * (len(g) - 1),
                                      -min(ranks[i] for i in g)))
    return min(best, key=lambda i: ranks[i])


def _report(correct: dict[str, list[bool]], graded: Sequence[tuple[float, int]], team: Sequence[str],
            train_questions: int) -> dict[str, Any]:
    from sklearn.metrics import roc_auc_score

    from reso.evals.reports.stats import paired_bootstrap, wilson_interval

    n = len(correct["judge"])
    rows = [{"method": method, "accuracy": sum(correct[method]) / n if n else math.nan,
             "ci95": wilson_interval(sum(correct[method]), n)} for method in METHODS]
    matrix = np.asarray([correct[m] for m in ("judge", "plurality", "best_fixed")], dtype=float)
    gains = {}
    if n:
        for reference, name in ((1, "judge_minus_plurality"), (2, "judge_minus_best_fixed")):
            paired = paired_bootstrap(matrix, np.ones_like(matrix), reference=reference)[0]
            gains[name] = {"points": 100 * paired.accuracy_diff,
                           "ci95": [100 * v for v in paired.accuracy_diff_ci95 or [math.nan, math.nan]]}
    probabilities = np.asarray([p for p, _ in graded])
    labels = np.asarray([label for _, label in graded])
    auc = float(roc_auc_score(labels, probabilities)) if len(set(labels.tolist())) == 2 else None
    ece = expected_calibration_error(probabilities, labels) if len(labels) else None
    return {"rows": rows, "auc": auc, "ece": ece, "n": n, **gains, "models": list(team),
            "train_questions": train_questions, "answers_graded": len(graded)}


def render_table(report: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"The judge's pick among {len(report['models'])} models' answers, {report['n']} test "
                        f"questions (AUC {_number(report['auc'])}, ECE {_number(report['ece'])})")
    for column in ("method", "accuracy", "95 % interval"):
        table.add_column(column)
    for row in report["rows"]:
        low, high = row["ci95"] or (math.nan, math.nan)
        table.add_row(row["method"], f"{row['accuracy']:.1%}", f"[{low:.1%}, {high:.1%}]")
    for row in report.get("verifiers") or []:
        low, high = row["ci95"] or (math.nan, math.nan)
        table.add_row(f"vote weighted by {row['verifier']} (AUC {_number(row['auc'])})", f"{row['accuracy']:.1%}",
                      f"[{low:.1%}, {high:.1%}]")
    return table


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
