"""CRM evaluation figures: AUCs against scikit-learn, per-model AUC, selection, grouped cross-validation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.labelled_records import LabelledRecord
from reso.reward.training.crm_eval import (
    cross_validated_scores,
    evaluate_scores,
    records_to_items,
    score_records,
    selection_summary,
)


def _records(labels: list[tuple[str, str, int]]) -> list[LabelledRecord]:
    return [
        LabelledRecord(instruction=f"question {q}", answer=f"answer {i}", label=y, model=m, question_id=q)
        for i, (q, m, y) in enumerate(labels)
    ]


def test_pooled_and_per_model_auc_equal_sklearn() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, size=60)
    models = np.array(["a", "b", "c"] * 20)
    scores = np.clip(0.3 * labels + rng.random(60) * 0.8, 0, 1)
    records = _records([(str(i // 3), m, int(y)) for i, (m, y) in enumerate(zip(models, labels))])
    result = evaluate_scores(records, scores)
    assert result["n"] == 60
    assert result["auc"] == pytest.approx(roc_auc_score(labels, scores))
    for model in "abc":
        mask = models == model
        assert result["auc_per_model"][model] == pytest.approx(roc_auc_score(labels[mask], scores[mask]))
    assert result["auc_within_model_mean"] == pytest.approx(np.mean(list(result["auc_per_model"].values())))
    assert result["brier"] == pytest.approx(np.mean((scores - labels) ** 2))
    assert result["accuracy"] == pytest.approx(np.mean((scores >= 0.5) == labels))


def test_auc_is_none_when_one_class_only_and_no_models_means_no_per_model_keys() -> None:
    records = [LabelledRecord(instruction="q", answer="a", label=1), LabelledRecord("r", "b", 1)]
    result = evaluate_scores(records, [0.2, 0.9])
    assert result["auc"] is None
    assert "auc_per_model" not in result
    with pytest.raises(ValueError, match="2 records but 1 scores"):
        evaluate_scores(records, [0.5])


def test_selection_compares_choice_with_fixed_models_and_oracle() -> None:
    records = _records(
        [
            ("1", "big", 1), ("1", "small", 1),
            ("2", "big", 0), ("2", "small", 1),
            ("3", "big", 1), ("3", "small", 0),
            ("4", "big", 0), ("4", "small", 0),
        ]
    )
    # Picks: q1 big (right), q2 small (right), q3 small (wrong), q4 tie -> first listed (big, wrong).
    scores = np.array([0.9, 0.1, 0.2, 0.8, 0.4, 0.6, 0.5, 0.5])
    summary = selection_summary(records, scores)
    assert summary["n_questions"] == 4
    assert summary["crm_choice_accuracy"] == 0.5
    assert summary["oracle_accuracy"] == 0.75
    assert summary["always_model_accuracy"] == {"big": 0.5, "small": 0.5}
    assert summary["crm_minus_best_fixed"] == 0.0


class _LengthScorer(Scorer):
    """Scores by answer length and records the batches it was given."""

    def __init__(self) -> None:
        self.batches: list[list[ScoreItem]] = []

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        self.batches.append(list(items))
        return [Score(min(len(item.answer) / 10, 1.0)) for item in items]


def test_score_records_keeps_peers_in_one_batch_and_hides_the_reference() -> None:
    records = [
        LabelledRecord(instruction=f"q{q}", answer="x" * (q + m), label=1, question_id=str(q), model=str(m),
                       reference="5")
        for q in range(5)
        for m in range(2)
    ]
    scorer = _LengthScorer()
    scores = score_records(scorer, records, batch_questions=2)
    assert scores.tolist() == [min((q + m) / 10, 1.0) for q in range(5) for m in range(2)]
    assert [len(batch) for batch in scorer.batches] == [4, 4, 2]
    assert all(item.reference is None for batch in scorer.batches for item in batch)
    assert records_to_items(records)[3].group == "1"


def test_cross_validation_never_splits_a_question() -> None:
    records = _records([(str(q), m, (q + i) % 2) for q in range(12) for i, m in enumerate("ab")])
    seen: list[tuple[set[str], set[str]]] = []

    def fit_predict(train: Sequence[LabelledRecord], test: Sequence[LabelledRecord]) -> np.ndarray:
        seen.append(({r.question_id for r in train}, {r.question_id for r in test}))
        return np.full(len(test), 0.25)

    scores = cross_validated_scores(records, fit_predict, folds=4)
    assert len(seen) == 4
    assert all(not (train & test) for train, test in seen)
    assert set().union(*(test for _, test in seen)) == {str(q) for q in range(12)}
    assert scores.tolist() == [0.25] * len(records)


def test_weighted_auc_equals_sklearn_with_sample_weights_and_ties() -> None:
    from reso.reward.training.crm_eval import weighted_auc

    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, size=300)
    scores = np.round(rng.random(300) * 0.6 + 0.3 * labels, 1)  # rounded: many ties
    weights = rng.integers(0, 4, size=300).astype(float)
    expected = roc_auc_score(labels, scores, sample_weight=weights)
    assert weighted_auc(labels, scores, weights) == pytest.approx(expected)
    assert weighted_auc(labels, scores, np.ones(300)) == pytest.approx(roc_auc_score(labels, scores))
    assert weighted_auc(np.ones(5, dtype=int), np.arange(5.0), np.ones(5)) is None


def test_bootstrap_intervals_hold_the_figures_and_skip_failed_scores() -> None:
    from reso.reward.training.crm_eval import bootstrap_intervals

    rng = np.random.default_rng(2)
    records = _records([(str(i // 4), "ab"[i % 2], int(rng.random() < 0.5)) for i in range(400)])
    labels = np.array([r.label for r in records])
    scores = np.clip(0.35 * labels + rng.random(400) * 0.65, 0, 1)
    result = evaluate_scores(records, scores)
    intervals = bootstrap_intervals(records, scores, resamples=100)
    for name in ("auc", "auc_within_model_mean", "brier"):
        low, high = intervals[name]
        assert low < result[name] < high and high - low < 0.2
    scores[:3] = np.nan
    assert bootstrap_intervals(records, scores, resamples=20)["auc"] is not None
