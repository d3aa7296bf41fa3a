"""What each part of the small CRM adds, measured where it has to generalise.

Each variant (the default CRM with one part switched off or one added) is trained and tested three ways,
all on records the training never saw:

- held-out questions: trained on the `train` side of the question hash, tested on the `test` side;
- held-out models: the models are split into folds by a hash of their name; each fold's models are
  left out of training and tested alone (their answers on test questions, scored without their record);
- held-out problem sets: trained on one source file's training questions, tested on another file's test
  questions (GSM8K to MATH Level 5 and back), the nearest offline stand-in for a new benchmark.

Variants are trained with the default settings (no tuning: the defaults are the settings tuning chose on
the training questions), so a difference is the part's, not a different search's. Figures: the AUC of
answers scored one at a time (a lone solution, as in ProcessBench) pooled and within
model, the within-model AUC with every recorded answer of the question as peers, and the share right when
choosing among K recorded answers against majority vote.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from reso.reward.features import Candidate
from reso.reward.labelled_records import LabelledRecord, split_by_question
from reso.reward.small_crm import SmallCRM, SmallCRMConfig, SmallCRMScorer, candidates_from_records
from reso.reward.training.crm_candidates import compare_picks, draw_slates
from reso.reward.training.crm_eval import bootstrap_intervals, evaluate_scores, score_groups
from reso.reward.training.small_crm_fit import fit_small_crm

# Each variant is a change to the default settings.
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no_prior": {"use_prior": False},
    "no_group": {"use_group": False},
    "question_embedding": {"question_embedding": True},
    "answer_embedding": {"answer_embedding": True},
    "neural": {"neural": True},
}
AXES = ("questions", "models", "problem_sets")
Log = Callable[[str], None]


def _alone(crm: SmallCRM, records: Sequence[LabelledRecord]) -> np.ndarray:
    """Scores of answers each on its own, their model unknown (a lone solution of an unseen model)."""
    candidates = [Candidate(c.question, c.answer, group=f"alone-{i}") for i, c in enumerate(candidates_from_records(records))]
    return crm.predict_candidates(candidates)


def _figures(crm: SmallCRM, records: Sequence[LabelledRecord], k: int, draws: int, seed: int) -> dict[str, Any]:
    alone_scores, peer_scores = _alone(crm, records), crm.predict_records(records)
    alone, peers = evaluate_scores(records, alone_scores), evaluate_scores(records, peer_scores)
    alone_ci = bootstrap_intervals(records, alone_scores, seed=seed)
    out = {
        "n": len(records),
        "alone_auc": alone["auc"],
        "alone_auc_ci": alone_ci["auc"],
        "alone_auc_within_model": alone.get("auc_within_model_mean"),
        "alone_auc_within_model_ci": alone_ci["auc_within_model_mean"],
        "peers_auc_within_model": peers.get("auc_within_model_mean"),
        "peers_auc_within_model_ci": bootstrap_intervals(records, peer_scores, seed=seed)["auc_within_model_mean"],
    }
    slates = draw_slates(records, k, draws, seed=seed)
    if slates:
        picks = compare_picks(records, slates, score_groups(SmallCRMScorer(model=crm), records, slates), None,
                              seed=seed, resamples=0)
        out.update({f"pick{k}_crm": picks["crm"], f"pick{k}_vote": picks["vote"]})
    return out


def model_folds(records: Sequence[LabelledRecord], folds: int) -> dict[str, int]:
    """Each model's fold, by a hash of its name (stable across runs and files)."""
    models = sorted({r.model for r in records if r.model})
    return {m: int(hashlib.sha256(m.encode("utf-8")).hexdigest(), 16) % folds for m in models}


def _mean_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Figures averaged over folds (intervals per fold stay in `folds`)."""
    keys = [k for k in rows[0] if all(isinstance(r.get(k), (int, float)) for r in rows)]
    return {**{k: float(np.mean([r[k] for r in rows])) for k in keys}, "folds": list(rows)}


def ablate(
    files: Mapping[str, Sequence[LabelledRecord]],
    variants: Sequence[str],
    *,
    model_fold_count: int = 2,
    axes: Sequence[str] = AXES,
    k: int = 3,
    draws: int = 5,
    seed: int = 0,
    log: Log = lambda line: None,
) -> dict[str, Any]:
    """Train and test every variant on held-out questions, models and problem sets.

    Args:
        files: records by source name (one entry per problem set).
        variants: names from VARIANTS.
        model_fold_count: folds of models for the held-out models test.
        axes: which of AXES to test on.
        k, draws: slates of K answers, `draws` per question.
        seed: the CRM's and the slates' seed.
        log: progress lines.
    """
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant {unknown[0]!r} (known: {', '.join(VARIANTS)})")
    unknown = [a for a in axes if a not in AXES]
    if unknown:
        raise ValueError(f"unknown axis {unknown[0]!r} (known: {', '.join(AXES)})")
    everything = [r for records in files.values() for r in records]
    train, test = split_by_question(everything, "train"), split_by_question(everything, "test")
    folds = model_folds(everything, model_fold_count)
    result: dict[str, Any] = {"n_train": len(train), "n_test": len(test), "models": len(folds), "variants": {}}
    for name in variants:
        config = replace(SmallCRMConfig(seed=seed), **VARIANTS[name])

        def fit(records: Sequence[LabelledRecord], cfg: SmallCRMConfig = config) -> SmallCRM:
            return fit_small_crm(records, replace(cfg, answer_params=dict(cfg.answer_params),
                                                  group_params=dict(cfg.group_params), embedding_params={},
                                                  neural_params=dict(cfg.neural_params)))

        row: dict[str, Any] = {}
        if "questions" in axes:
            log(f"{name}: held-out questions")
            row["questions"] = _figures(fit(train), test, k, draws, seed)
        by_fold = []
        for fold in range(model_fold_count if "models" in axes else 0):
            seen = [r for r in train if folds.get(r.model or "") != fold]
            unseen = [r for r in test if folds.get(r.model or "") == fold]
            if not unseen or len({r.label for r in seen}) < 2:
                continue  # every model hashed to one side: nothing to hold out in this fold
            log(f"{name}: held-out models, fold {fold}")
            by_fold.append(_figures(fit(seen), unseen, k, draws, seed))
        if "models" in axes:
            row["models"] = _mean_rows(by_fold) if by_fold else None
        transfer = {}
        for source, records in files.items():
            if "problem_sets" not in axes or len(files) < 2:
                continue
            crm = fit(split_by_question(records, "train"))  # once per source, tested on every other file
            for target, others in files.items():
                if source == target:
                    continue
                log(f"{name}: trained on {source}, tested on {target}")
                held = split_by_question(others, "test")
                alone = _alone(crm, held)
                scores, ci = evaluate_scores(held, alone), bootstrap_intervals(held, alone, seed=seed)
                transfer[f"{source}->{target}"] = {"alone_auc": scores["auc"], "alone_auc_ci": ci["auc"],
                                                   "alone_auc_within_model": scores.get("auc_within_model_mean"),
                                                   "alone_auc_within_model_ci": ci["auc_within_model_mean"]}
        if "problem_sets" in axes:
            row["problem_sets"] = transfer
        result["variants"][name] = row
    return result
