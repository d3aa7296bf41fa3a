"""A fitted gradient-boosted tree model flattened into arrays, for scoring a few rows at a time fast.

The engine scores one subtask's two or three answers per CRM call. scikit-learn's histogram gradient
boosting predicts tree by tree, one Python-level call each (about 17 µs), so a 500-tree CRM spends some
16 ms on three rows, most of a test run's time. Here every tree's nodes sit in one set of arrays and all
trees descend together, one vectorised step per tree level: the same numbers in a few hundred
microseconds. scikit-learn has no such path for small batches, hence this module; large batches still go
to scikit-learn (multi-threaded there). Only binary, numerical-split models are flattened (the small CRM's
kind); anything else is predicted by scikit-learn as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SMALL_BATCH = 64
"""Rows up to which `decision_values` descends the flattened trees; more go to scikit-learn."""


class FlatTrees:
    """The decision function of a fitted binary `HistGradientBoostingClassifier`, as flat node arrays."""

    def __init__(self, model: Any) -> None:
        trees = [per_iteration[0].nodes for per_iteration in model._predictors]
        sizes = np.array([len(nodes) for nodes in trees])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        nodes = np.concatenate(trees)
        shift = np.repeat(offsets, sizes)
        self.roots = offsets.astype(np.int64)
        self.feature = nodes["feature_idx"].astype(np.int64)
        self.threshold = nodes["num_threshold"].astype(np.float64)
        self.missing_left = nodes["missing_go_to_left"].astype(bool)
        self.is_leaf = nodes["is_leaf"].astype(bool)
        self.left = np.where(self.is_leaf, 0, nodes["left"].astype(np.int64) + shift)
        self.right = np.where(self.is_leaf, 0, nodes["right"].astype(np.int64) + shift)
        self.value = nodes["value"].astype(np.float64)
        self.depth = int(nodes["depth"].max()) if len(nodes) else 0
        self.baseline = float(np.ravel(model._baseline_prediction)[0])

    @staticmethod
    def supports(model: Any) -> bool:
        """Whether `model` is a fitted binary histogram GBDT with numerical splits only."""
        predictors = getattr(model, "_predictors", None)
        if not predictors or getattr(model, "n_trees_per_iteration_", None) != 1:
            return False
        return not any(per_iteration[0].nodes["is_categorical"].any() for per_iteration in predictors)

    def decision_function(self, features: np.ndarray) -> np.ndarray:
        """The raw score (log-odds) of each row, as `model.decision_function` gives it."""
        x = np.asarray(features, dtype=np.float64)
        node = np.tile(self.roots, (len(x), 1))
        rows = np.arange(len(x))[:, None]
        for _ in range(self.depth):
            leaf = self.is_leaf[node]
            if leaf.all():
                break
            value = x[rows, self.feature[node]]
            # A missing value follows the split's learned side; otherwise `x <= threshold` goes left.
            left = np.where(np.isnan(value), self.missing_left[node], value <= self.threshold[node])
            node = np.where(leaf, node, np.where(left, self.left[node], self.right[node]))
        return self.baseline + self.value[node].sum(axis=1)


class TreeScorer:
    """A fitted classifier's decision values: flattened trees for batches of up to `small_batch` rows where
    the model allows (0: always scikit-learn, as `reso bench crm-calls` compares)."""

    def __init__(self, model: Any, small_batch: int = SMALL_BATCH) -> None:
        self.model = model
        self.small_batch = small_batch
        self.flat = FlatTrees(model) if small_batch > 0 and FlatTrees.supports(model) else None

    def decision_values(self, features: np.ndarray) -> np.ndarray:
        if self.flat is not None and len(features) <= self.small_batch:
            return self.flat.decision_function(features)
        return np.asarray(self.model.decision_function(features), dtype=np.float64)
