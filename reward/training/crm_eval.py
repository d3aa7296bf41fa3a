"""How well a CRM's scores separate right answers from wrong ones, and what choosing by them is worth.

Given labelled records and one score per record: pooled AUC, accuracy at 0.5, Brier score, and per
answering model the AUC over that model's answers only (the pooled AUC is inflated whenever one model is
right more often than another, so the within-model mean is the honest figure). The `selection` block
asks the question that matters in the graph: per question, take the candidate with the highest score,
and compare the share right against always taking one fixed model's answer and against the oracle.
For step-labelled solutions and a scorer that scores steps, ProcessBench's F1: the harmonic mean of the
share of wrong solutions whose first wrong step is found exactly and the share of right solutions in
which no step is flagged. Intervals come from a bootstrap over questions (the unit that was sampled:
answers to one question are not independent), cheap enough to be on by default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from reso.reward.base import ScoreItem, Scorer, ScorerFailedError, StepScoring, first_error_step
from reso.reward.labelled_records import LabelledRecord, question_key


def _auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    from sklearn.metrics import roc_auc_score

    if len(labels) == 0 or labels.min() == labels.max():
        return None
    return float(roc_auc_score(labels, scores))


def records_to_items(records: Sequence[LabelledRecord]) -> list[ScoreItem]:
    """ScoreItems for scoring records; the reference is left out so no scorer sees the ground truth."""
    return [
        ScoreItem(
            subtask=r.instruction,
            answer=r.answer,
            context=r.context,
            agent_id=r.agent_id or r.model or "",
            model=r.model,
            group=question_key(r),
        )
        for r in records
    ]


def score_records(scorer: Scorer, records: Sequence[LabelledRecord], batch_questions: int = 256) -> np.ndarray:
    """Score records with `scorer`, one batch per run of whole questions (peers always share a batch)."""
    by_question: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        by_question.setdefault(question_key(record), []).append(index)
    return score_groups(scorer, records, list(by_question.values()), batch_groups=batch_questions)


def score_groups(scorer: Scorer, records: Sequence[LabelledRecord], groups: Sequence[Sequence[int]],
                 batch_groups: int = 256) -> np.ndarray:
    """Score each group of records as one slate of peers (a record may sit in several groups).

    Returns:
        One score per entry of the concatenated groups, in that order; NaN where the scorer failed.

    Raises:
        ScorerFailedError: the scorer failed on every entry.
    """
    items = records_to_items(records)
    out: list[float] = []
    first_failure: str | None = None
    for start in range(0, len(groups), batch_groups):
        batch = [
            ScoreItem(subtask=items[i].subtask, answer=items[i].answer, context=items[i].context,
                      agent_id=items[i].agent_id, model=items[i].model, group=f"slate-{start + g}")
            for g, members in enumerate(groups[start : start + batch_groups])
            for i in members
        ]
        for score in scorer.score_detailed(batch):
            out.append(float("nan") if score.failed else score.value)
            if score.failed and first_failure is None:
                first_failure = score.reason
    values = np.asarray(out, dtype=np.float64)
    if len(values) and np.isnan(values).all():
        raise ScorerFailedError(f"{getattr(scorer, 'name', 'scorer')} failed on all {len(values)} answers: {first_failure}")
    return values


def step_predictions(scorer: Scorer, records: Sequence[LabelledRecord], threshold: float = 0.5) -> list[int] | None:
    """The first step each step-labelled record's solution is flagged at (-1: none), by a scorer that scores
    steps; None when the scorer does not or no record has steps (other records get -1 and are not used)."""
    stepped = [i for i, r in enumerate(records) if r.steps is not None and r.first_error_step is not None]
    if not isinstance(scorer, StepScoring) or not stepped:
        return None
    items = records_to_items([records[i] for i in stepped])
    values = scorer.score_steps(items, [records[i].steps or () for i in stepped])
    predicted = [-1] * len(records)
    for index, step_scores in zip(stepped, values, strict=True):
        predicted[index] = first_error_step(step_scores, threshold)
    return predicted


def processbench_f1(records: Sequence[LabelledRecord], predicted: Sequence[int]) -> dict[str, Any] | None:
    """ProcessBench's figures over the step-labelled records: accuracy on solutions with a wrong step (the
    first one found exactly), on solutions without one (nothing flagged), and their harmonic mean."""
    pairs = [(r.first_error_step, p) for r, p in zip(records, predicted, strict=True) if r.first_error_step is not None]
    wrong = [p == gold for gold, p in pairs if gold != -1]
    right = [p == -1 for gold, p in pairs if gold == -1]
    if not wrong or not right:
        return None
    error_accuracy, correct_accuracy = float(np.mean(wrong)), float(np.mean(right))
    total = error_accuracy + correct_accuracy
    return {
        "n_with_error": len(wrong),
        "n_without_error": len(right),
        "error_accuracy": error_accuracy,
        "correct_accuracy": correct_accuracy,
        "f1": 2 * error_accuracy * correct_accuracy / total if total else 0.0,
    }


def weighted_auc(labels: np.ndarray, scores: np.ndarray, weights: np.ndarray) -> float | None:
    """ROC AUC with sample weights, ties counting one half: the same value as scikit-learn's
    `roc_auc_score(..., sample_weight=...)`, written out because that call's input checks cost about 3 ms,
    which is most of a bootstrap's thousands of AUCs."""
    order = np.argsort(scores, kind="mergesort")
    values, positive, weight = scores[order], labels[order].astype(float), weights[order].astype(float)
    _, starts = np.unique(values, return_index=True)
    pos = np.add.reduceat(weight * positive, starts)
    neg = np.add.reduceat(weight * (1.0 - positive), starts)
    denominator = pos.sum() * neg.sum()
    if denominator <= 0:
        return None
    return float(np.sum(pos * (np.cumsum(neg) - neg + 0.5 * neg)) / denominator)


def bootstrap_intervals(
    records: Sequence[LabelledRecord], scores: Sequence[float] | np.ndarray, resamples: int = 200,
    seed: int = 0, level: float = 0.95,
) -> dict[str, list[float] | None]:
    """Percentile intervals of the pooled AUC, the within-model AUC mean and the Brier score, resampling
    whole questions with replacement (written out because scipy's bootstrap resamples single rows).

    A resample enters each answer with its question's draw count as a weight, which equals repeating it.
    """
    keep = ~np.isnan(np.asarray(scores, dtype=np.float64))
    records = [r for r, ok in zip(records, keep) if ok]
    labels = np.array([r.label for r in records], dtype=int)
    values = np.clip(np.asarray(scores, dtype=np.float64)[keep], 0.0, 1.0)
    keys = [question_key(r) for r in records]
    index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    question = np.array([index[key] for key in keys])
    models = np.array([r.model or "" for r in records])
    named = [m for m in sorted(set(models.tolist())) if m and len(set(labels[models == m].tolist())) == 2]
    by_model = {m: np.flatnonzero(models == m) for m in named}
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {"auc": [], "auc_within_model_mean": [], "brier": []}
    for _ in range(resamples):
        weight = np.bincount(rng.integers(0, len(index), len(index)), minlength=len(index))[question].astype(float)
        live = weight > 0
        draws["brier"].append(float(np.average((values - labels) ** 2, weights=weight)))
        pooled = weighted_auc(labels[live], values[live], weight[live])
        if pooled is not None:
            draws["auc"].append(pooled)
        within = [auc for m in named if (auc := weighted_auc(labels[by_model[m]], values[by_model[m]],
                                                             weight[by_model[m]])) is not None]
        if within:
            draws["auc_within_model_mean"].append(float(np.mean(within)))
    tail = (1.0 - level) / 2 * 100
    return {
        name: [float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail))] if len(v) >= 10 else None
        for name, v in draws.items()
    }


def selection_summary(records: Sequence[LabelledRecord], scores: np.ndarray) -> dict[str, Any]:
    """Per question, the share right when choosing by score, by a fixed model, and by an oracle.

    Ties in score go to the candidate listed first. Fixed-model shares count the questions that model
    answered.
    """
    by_question: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        by_question.setdefault(question_key(record), []).append(index)
    chosen_right = oracle_right = 0
    fixed: dict[str, list[int]] = {}
    for members in by_question.values():
        best = max(members, key=lambda i: (scores[i], -i))
        chosen_right += records[best].label
        oracle_right += max(records[i].label for i in members)
        for i in members:
            if (model := records[i].model) is not None:
                fixed.setdefault(model, []).append(records[i].label)
    n = len(by_question)
    always = {model: sum(values) / len(values) for model, values in sorted(fixed.items())}
    summary: dict[str, Any] = {
        "n_questions": n,
        "crm_choice_accuracy": chosen_right / n if n else None,
        "oracle_accuracy": oracle_right / n if n else None,
        "always_model_accuracy": always,
    }
    if always:
        best_model = max(always, key=lambda m: always[m])
        summary["best_fixed_model"] = best_model
        summary["crm_minus_best_fixed"] = summary["crm_choice_accuracy"] - always[best_model]
    return summary


def evaluate_scores(records: Sequence[LabelledRecord], scores: Sequence[float] | np.ndarray,
                    first_errors: Sequence[int] | None = None) -> dict[str, Any]:
    """All figures for one set of scores.

    Args:
        records: the labelled records (question_id groups candidates; model enables per-model AUC).
        scores: one score in [0, 1] per record.
        first_errors: the step each record's solution was first flagged at (-1: none), from
            `step_predictions`, or None when the scorer does not score steps.

    Returns:
        `{n, scorer_failures, auc, accuracy, brier, positive_rate, auc_per_model, auc_within_model_mean,
        processbench_f1, selection}` (and `processbench` with its parts when there is an F1); scores that
        are NaN (the scorer failed) are counted in `scorer_failures` and left out of the rest; AUCs are
        None where only one label occurs; per-model keys only when records name models.
    """
    if len(records) != len(scores):
        raise ValueError(f"{len(records)} records but {len(scores)} scores")
    values = np.asarray(scores, dtype=np.float64)
    failed = np.isnan(values)
    if failed.any():
        # Answers the scorer failed on are counted, not scored: they leave every figure below.
        records = [r for r, bad in zip(records, failed) if not bad]
        values = values[~failed]
        first_errors = None if first_errors is None else [e for e, bad in zip(first_errors, failed) if not bad]
    labels = np.array([r.label for r in records], dtype=int)
    values = np.clip(values, 0.0, 1.0)
    result: dict[str, Any] = {
        "n": len(records),
        "scorer_failures": int(failed.sum()),
        "auc": _auc(labels, values),
        "accuracy": float(np.mean((values >= 0.5) == labels)) if len(labels) else None,
        "brier": float(np.mean((values - labels) ** 2)) if len(labels) else None,
        "positive_rate": float(labels.mean()) if len(labels) else None,
    }
    models = np.array([r.model or "" for r in records])
    named = sorted({m for m in models.tolist() if m})
    if named:
        per_model = {m: _auc(labels[models == m], values[models == m]) for m in named}
        result["auc_per_model"] = per_model
        defined = [a for a in per_model.values() if a is not None]
        result["auc_within_model_mean"] = float(np.mean(defined)) if defined else None
    bench = processbench_f1(records, first_errors) if first_errors is not None else None
    result["processbench_f1"] = bench["f1"] if bench else None
    if bench:
        result["processbench"] = bench
    result["selection"] = selection_summary(records, values)
    return result


def cross_validated_scores(
    records: Sequence[LabelledRecord],
    fit_predict: Callable[[Sequence[LabelledRecord], Sequence[LabelledRecord]], np.ndarray],
    folds: int = 5,
) -> np.ndarray:
    """Out-of-fold scores with folds split by question, so no question is on both sides.

    Args:
        records: the training records.
        fit_predict: trains on the first argument and returns scores for the second.
        folds: number of folds.
    """
    from sklearn.model_selection import GroupKFold

    groups = np.array([question_key(r) for r in records])
    folds = min(folds, len(set(groups.tolist())))
    if folds < 2:
        raise ValueError("cross-validation needs records from at least two questions")
    scores = np.zeros(len(records))
    for train_idx, test_idx in GroupKFold(n_splits=folds).split(np.zeros(len(records)), groups=groups):
        train = [records[i] for i in train_idx]
        test = [records[i] for i in test_idx]
        scores[test_idx] = fit_predict(train, test)
    return scores
