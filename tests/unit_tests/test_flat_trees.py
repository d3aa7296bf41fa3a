"""Flattened gradient-boosted trees give scikit-learn's decision values, missing values included."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from reso.reward.flat_trees import SMALL_BATCH, FlatTrees, TreeScorer


def _data(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 6))
    x[rng.random(x.shape) < 0.1] = np.nan
    y = (np.nan_to_num(x[:, 0]) + np.nan_to_num(x[:, 1]) * np.nan_to_num(x[:, 2]) > 0.3).astype(int)
    return x, y


@pytest.fixture(scope="module")
def model() -> HistGradientBoostingClassifier:
    x, y = _data(2000, 0)
    return HistGradientBoostingClassifier(max_iter=60, max_leaf_nodes=15, early_stopping=False,
                                          random_state=0).fit(x, y)


def test_flat_trees_match_scikit_learn_on_small_batches(model):
    x, _ = _data(300, 1)
    flat = FlatTrees(model)
    for rows in (x[:1], x[:3], x[:SMALL_BATCH], x):
        np.testing.assert_allclose(flat.decision_function(rows), model.decision_function(rows), rtol=0, atol=1e-9)
    # A row that is all missing follows every split's learned side.
    empty = np.full((1, 6), np.nan)
    np.testing.assert_allclose(flat.decision_function(empty), model.decision_function(empty), atol=1e-9)


def test_tree_scorer_uses_the_flat_path_only_where_it_is_exact(model):
    x, _ = _data(200, 2)
    scorer = TreeScorer(model)
    assert scorer.flat is not None
    np.testing.assert_allclose(scorer.decision_values(x[:2]), model.decision_function(x[:2]), atol=1e-9)
    np.testing.assert_allclose(scorer.decision_values(x), model.decision_function(x), atol=1e-9)

    rng = np.random.default_rng(3)
    multiclass = HistGradientBoostingClassifier(max_iter=5).fit(rng.normal(size=(90, 3)), np.arange(90) % 3)
    categorical = HistGradientBoostingClassifier(max_iter=5, categorical_features=[0]).fit(
        np.column_stack([np.arange(90) % 4, rng.normal(size=90)]), np.arange(90) % 2)
    assert not FlatTrees.supports(multiclass) and TreeScorer(multiclass).flat is None
    assert not FlatTrees.supports(categorical)
    assert not FlatTrees.supports(HistGradientBoostingClassifier())  # not fitted
