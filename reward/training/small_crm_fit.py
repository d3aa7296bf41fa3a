"""Fitting the small CRM on labelled records: stacked stages, each chosen by grouped cross-validation.

The stages are fitted in order: the optional embedding and neural views (each an out-of-fold logit), the
answer model over one answer's features, its prior and those logits, then the group model over each
answer among its peers, fed the answer model's out-of-fold logits so it never sees the answer model's
verdict on that model's own training answers. With `tune=True` every stage's setting is chosen from its
grid (`reward/training/crm_search.py`) by the lowest out-of-fold log loss; without, the config's settings
are used. The result is a `SmallCRM` (`reward/small_crm.py`), the part a run loads and scores with.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from reso.reward.answer_features import Solution, read_solution
from reso.reward.features import Candidate, candidates_from_records, groups_of, peer_features
from reso.reward.labelled_records import LabelledRecord
from reso.reward.small_crm import SmallCRM, SmallCRMConfig, limit_threads
from reso.reward.training.crm_search import (
    ANSWER_GRID,
    EMBEDDING_GRID,
    GROUP_GRID,
    boosted_trees,
    choose,
    grouped_folds,
    logistic,
)


def fit_small_crm(records: Sequence[LabelledRecord], config: SmallCRMConfig | None = None, *, tune: bool = False,
                  groups: Sequence[Sequence[int]] | None = None) -> SmallCRM:
    """Learn a small CRM from labelled records.

    Args:
        records: answers with 0/1 labels; records sharing a question are peers.
        config: the CRM's settings (default `SmallCRMConfig()`); with `tune`, its model settings are
            replaced by the chosen ones.
        tune: choose the answer, group and embedding models' settings from their grids by grouped
            cross-validation (else the config's settings are used).
        groups: the group model's training groups, as indices into `records` (each group's answers
            to one question; `reward/training/staged_crm_fit.py` draws them the way a run's fine stage
            asks); default: random groups of `config.group_sizes`.

    Returns:
        The fitted CRM.

    Raises:
        ValueError: no records, fewer than two questions (with folds), or one label value only.
    """
    crm = SmallCRM(config)
    if not records:
        raise ValueError("no records to train on")
    labels = np.array([r.label for r in records], dtype=int)
    cfg = crm.config
    candidates = candidates_from_records(records)
    questions = np.array([c.group for c in candidates])
    # Fewer than two folds: no tuning, and the group model learns from in-sample answer logits.
    splits = grouped_folds(questions, cfg.folds) if cfg.folds >= 2 else None
    if labels.min() == labels.max():
        raise ValueError(f"all {len(records)} training records have label {labels[0]}; need both 0 and 1")
    crm.base_rate = float(labels.mean())
    per_model: dict[str, list[int]] = {}
    for candidate, label in zip(candidates, labels):
        if candidate.model:
            per_model.setdefault(candidate.model, []).append(int(label))
    # Smoothed towards the base rate so a model seen a handful of times gets no extreme prior.
    crm.model_priors = {
        model: (sum(values) + cfg.prior_smoothing * crm.base_rate) / (len(values) + cfg.prior_smoothing)
        for model, values in per_model.items()
    }
    hidden = np.random.default_rng(cfg.seed).random(len(records)) < cfg.hidden_prior_share
    solutions = [read_solution(c.question, c.answer) for c in candidates]
    tune = tune and splits is not None
    with limit_threads(cfg.threads):
        blocks = [np.asarray([s.features for s in solutions], dtype=np.float64)]
        if cfg.use_prior:
            blocks.append(crm.priors(candidates, hidden))
        views: dict[str, Any] = {}
        for view in crm.views:
            if view == "neural":
                views[view], oof = _neural_stage(cfg, candidates, solutions, labels, questions)
                blocks.append(oof[:, None])
                continue
            inputs = crm.view_inputs(view, candidates, solutions)
            grid = EMBEDDING_GRID if tune else [cfg.embedding_params.get(view, EMBEDDING_GRID[0])]
            params, views[view], oof = _stage(crm, view, logistic, grid, inputs, labels, splits)
            cfg.embedding_params[view] = params
            blocks.append(oof[:, None])
        answer_x = np.hstack(blocks)
        grid = ANSWER_GRID if tune else [cfg.answer_params]
        cfg.answer_params, answer_model, oof = _stage(
            crm, "answer_model", boosted_trees, grid, answer_x, labels, splits
        )
        if not cfg.use_group:
            crm.use_models(answer_model=answer_model, group_model=None, views=views)
            crm.n_train = len(records)
            return crm
        if groups is None:
            groups = random_groups(questions.tolist(), cfg.group_sizes, cfg.group_repeats, cfg.seed)
        elif not groups or any(not members for members in groups):
            raise ValueError("explicit training groups must be non-empty lists of record indices")
        rows = np.concatenate([np.asarray(members, dtype=int) for members in groups])
        group_labels = [f"{i}" for i, members in enumerate(groups) for _ in members]
        group_x = peer_features([solutions[i] for i in rows], group_labels, oof[rows], coincidence=cfg.coincidence)
        group_splits = grouped_folds(questions[rows], cfg.folds) if splits is not None else None
        grid = GROUP_GRID if tune else [cfg.group_params]
        cfg.group_params, group_model, _ = _stage(
            crm, "group_model", boosted_trees, grid, group_x, labels[rows], group_splits
        )
    crm.use_models(answer_model=answer_model, group_model=group_model, views=views)
    crm.n_train = len(records)
    return crm


def _neural_stage(config: SmallCRMConfig, candidates: Sequence[Candidate], solutions: Sequence[Solution],
                  labels: np.ndarray, questions: np.ndarray) -> tuple[Any, np.ndarray]:
    """Two verifiers, each trained on half of the questions and scoring the other half (their
    out-of-fold logits); new answers get the mean of both."""
    from reso.reward.neural_verifier import CrossFitted, NeuralVerifier, NeuralVerifierConfig

    texts = [c.question for c in candidates], [s.body for s in solutions]
    oof = np.zeros(len(labels))
    verifiers = []
    for fold, (train, test) in enumerate(grouped_folds(questions, 2)):
        settings = {"seed": config.seed + fold, **config.neural_params}
        verifier = NeuralVerifier(NeuralVerifierConfig(**settings)).fit(
            [texts[0][i] for i in train], [texts[1][i] for i in train], labels[train]
        )
        oof[test] = verifier.decision_function([texts[0][i] for i in test], [texts[1][i] for i in test])
        verifiers.append(verifier)
    return CrossFitted(verifiers), oof


def _stage(crm: SmallCRM, name: str, make: Any, grid: Sequence[dict[str, Any]], features: np.ndarray,
           labels: np.ndarray, splits: Sequence[tuple[np.ndarray, np.ndarray]] | None
           ) -> tuple[dict[str, Any], Any, np.ndarray]:
    """Choose a setting (by grouped cross-validation when there are folds), fit it on every row, and
    return the setting, the fitted model and its out-of-fold decision values (in-sample without folds).
    The candidates' figures are kept in `crm.selection[name]`."""
    seed = crm.config.seed
    if splits is None:
        model = make(grid[0], seed).fit(features, labels)
        crm.selection[name] = []
        return dict(grid[0]), model, model.decision_function(features)
    choice = choose(make, grid, features, labels, splits, seed=seed)
    crm.selection[name] = choice.table
    return choice.params, make(choice.params, seed).fit(features, labels), choice.oof


def random_groups(questions: Sequence[str], sizes: Sequence[int], repeats: int, seed: int) -> list[list[int]]:
    """Random groups of the answers of each question, `repeats` times over: sizes drawn from `sizes`
    (0 takes every answer left), so the group model meets lone answers, small slates and whole fields."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    by_question = groups_of(list(questions))
    for _ in range(max(1, repeats)):
        for members in by_question.values():
            left = list(members)
            rng.shuffle(left)
            while left:
                size = rng.choice(list(sizes)) or len(left)
                out.append(left[:size])
                left = left[size:]
    return out
