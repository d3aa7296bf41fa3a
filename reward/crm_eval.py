"""How well a CRM's scores separate right answers from wrong ones, and what choosing by them is worth.

Given labelled records and one score per record: pooled AUC, accuracy at 0.5, Brier score, and per
answering model the AUC over that model's answers only (the pooled AUC is inflated whenever one model is
right more often than another, so the within-model mean is the honest figure). The `selection` block
asks the question that matters in the graph: per question, take the candidate with the highest score,
and compare the share right against always taking one fixed model's answer and against the oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from reso.reward.base import ScoreItem, Scorer
from reso.reward.records import LabelledRecord, question_key, question_order


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
    order = question_order(records)
    by_question: dict[str, list[int]] = {}
    for index, record in enumerate(records):
        by_question.setdefault(question_key(record), []).append(index)
    items = records_to_items(records)
    scores = np.zeros(len(records))
    for start in range(0, len(order), batch_questions):
        indices = [i for q in order[start : start + batch_questions] for i in by_question[q]]
        values = scorer.score([items[i] for i in indices])
        scores[indices] = values
    return scores


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
            if records[i].model is not None:
                fixed.setdefault(records[i].model, []).append(records[i].label)
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


def evaluate_scores(records: Sequence[LabelledRecord], scores: Sequence[float]) -> dict[str, Any]:
    """All figures for one set of scores.

    Args:
        records: the labelled records (question_id groups candidates; model enables per-model AUC).
        scores: one score in [0, 1] per record.

    Returns:
        `{n, auc, accuracy, brier, positive_rate, auc_per_model, auc_within_model_mean, selection}`;
        AUCs are None where only one label occurs; per-model keys only when records name models.
    """
    if len(records) != len(scores):
        raise ValueError(f"{len(records)} records but {len(scores)} scores")
    labels = np.array([r.label for r in records], dtype=int)
    values = np.clip(np.asarray(scores, dtype=np.float64), 0.0, 1.0)
    result: dict[str, Any] = {
        "n": len(records),
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
