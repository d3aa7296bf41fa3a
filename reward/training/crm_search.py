"""Choosing the small CRM's settings by cross-validation grouped by question, on training questions only.

Every setting the CRM has is chosen here, on the records it is trained on: for each candidate setting,
out-of-fold predictions over folds that never split a question (scikit-learn's `GroupKFold`, so a
question's answers are never on both sides), and the setting with the lowest log loss wins. The search
is written as one `cross_val_predict` per candidate rather than with `GridSearchCV` because the CRM
stacks the winner's out-of-fold predictions into its next stage, and `GridSearchCV` keeps only scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reso.reward.small_crm import DEFAULT_ANSWER_PARAMS, DEFAULT_GROUP_PARAMS

# The answer model's grid: boosting step, and small trees with small leaves or larger ones with larger
# leaves (a few hundred records want the first, tens of thousands the second). The first setting is the
# small CRM's default.
ANSWER_GRID: tuple[dict[str, Any], ...] = tuple(
    {**DEFAULT_ANSWER_PARAMS, "learning_rate": rate, "max_leaf_nodes": leaves, "min_samples_leaf": leaf}
    for rate in (0.05, 0.1)
    for leaves, leaf in ((7, 10), (15, 40))
)
# The group model reads a dozen in-context features: small trees, two boosting steps.
GROUP_GRID: tuple[dict[str, Any], ...] = tuple(
    {**DEFAULT_GROUP_PARAMS, "learning_rate": rate} for rate in (0.05, 0.1)
)
# Inverse L2 strengths for the logistic models over embeddings.
EMBEDDING_GRID: tuple[dict[str, Any], ...] = tuple({"C": c} for c in (0.03, 0.3))


@dataclass(slots=True)
class Choice:
    """The chosen setting, its out-of-fold decision values, and every candidate's cross-validated figures."""

    params: dict[str, Any]
    oof: np.ndarray
    table: list[dict[str, Any]] = field(default_factory=list)


def boosted_trees(params: Mapping[str, Any], seed: int) -> Any:
    """A gradient-boosted tree classifier with `params` (scikit-learn's histogram implementation)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(**params, early_stopping=False, random_state=seed)


def logistic(params: Mapping[str, Any], seed: int) -> Any:
    """An L2 logistic regression over standardised inputs."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(**params, max_iter=3000, random_state=seed))


def grouped_folds(groups: np.ndarray, folds: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Train/test index pairs of `GroupKFold`: no group on both sides.

    Raises:
        ValueError: fewer than two groups.
    """
    from sklearn.model_selection import GroupKFold

    folds = min(folds, len(np.unique(groups)))
    if folds < 2:
        raise ValueError("cross-validation needs records from at least two questions")
    return list(GroupKFold(n_splits=folds).split(np.zeros(len(groups)), groups=groups))


def choose(
    make: Callable[[Mapping[str, Any], int], Any],
    grid: Sequence[Mapping[str, Any]],
    features: np.ndarray,
    labels: np.ndarray,
    splits: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    seed: int = 0,
) -> Choice:
    """The setting of `grid` with the lowest out-of-fold log loss.

    Args:
        make: builds an unfitted classifier from a setting and a seed.
        grid: candidate settings (one is allowed: its out-of-fold values are still computed).
        features, labels: the training rows.
        splits: the folds, from `grouped_folds`.
        seed: the classifiers' seed.
    """
    from sklearn.metrics import log_loss, roc_auc_score
    from sklearn.model_selection import cross_val_predict

    best: Choice | None = None
    best_loss = float("inf")
    table = []
    for params in grid:
        oof = cross_val_predict(make(params, seed), features, labels, cv=splits, method="decision_function")
        probabilities = 1.0 / (1.0 + np.exp(-np.clip(oof, -30, 30)))
        loss = float(log_loss(labels, probabilities, labels=[0, 1]))
        auc = float(roc_auc_score(labels, oof)) if labels.min() != labels.max() else None
        table.append({"params": dict(params), "log_loss": round(loss, 5), "auc": None if auc is None else round(auc, 5)})
        if loss < best_loss:
            best, best_loss = Choice(dict(params), oof), loss
    if best is None:
        raise ValueError("an empty grid of settings")
    best.table = table
    return best
