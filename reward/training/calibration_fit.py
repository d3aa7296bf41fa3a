"""Fitting the calibrated CRM's three parameters on a training run's labelled records.

Every group of one to three answers of one subtask that a fine stage could score is scored by the base CRM,
each answer carrying its model's record in those records, and a logistic regression over the logits of the
score and the record gives a, b and c of `CalibratedScorer` (`reward/calibrated_crm.py`). How well the
calibrated score tells one model's right lone answers from its wrong ones (`within_model_discrimination`) is
measured on the same records and kept with it: the priced asking policy plans its checks by it.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from reso.reward.base import ScoreItem
from reso.reward.calibrated_crm import CalibratedScorer, calibration_features
from reso.reward.features import groups_of
from reso.reward.labelled_records import LabelledRecord, question_key
from reso.reward.registry import build_scorer


def model_records(records: Sequence[LabelledRecord]) -> dict[str, tuple[float, int]]:
    """(right, answered) per model (else agent) in labelled records."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for record in records:
        total = totals[record.model or record.agent_id or ""]
        total[0] += int(record.label)
        total[1] += 1
    return {model: (float(right), answered) for model, (right, answered) in totals.items()}


def training_groups(records: Sequence[LabelledRecord], largest: int = 3) -> tuple[list[ScoreItem], list[int]]:
    """Every group of one to `largest` answers of one subtask that a fine stage could score, flattened: score
    items carrying their model's record, each group under its own group key, and their labels."""
    records_of = model_records(records)
    items: list[ScoreItem] = []
    labels: list[int] = []
    for key, indices in groups_of([question_key(record) for record in records]).items():
        members = [records[i] for i in indices]
        subsets = (s for size in range(1, min(largest, len(members)) + 1)
                   for s in itertools.combinations(members, size))
        for number, subset in enumerate(subsets):
            for r in subset:
                model = r.model or r.agent_id or ""
                items.append(ScoreItem(subtask=r.instruction, answer=r.answer, context=r.context,
                                       agent_id=r.agent_id or "", model=r.model, group=f"{key}#{number}",
                                       record=records_of[model]))
                labels.append(int(r.label))
    return items, labels


def fit_calibration(base_spec: str, records: Sequence[LabelledRecord], largest: int = 3) -> CalibratedScorer:
    """Fit a, b, c on the groups of `records` (a training run's labelled answers) scored by `base_spec`."""
    from sklearn.linear_model import LogisticRegression

    base = build_scorer(base_spec)
    items, labels = training_groups(records, largest)
    scores = base.score_detailed(items)
    kept = [i for i, score in enumerate(scores) if not (score.failed or score.reason)]
    rows = np.array([calibration_features(scores[i].value, items[i]) for i in kept])
    fit = LogisticRegression(C=1.0).fit(rows, np.array([labels[i] for i in kept]))
    coefficients = (float(fit.intercept_[0]), float(fit.coef_[0][0]), float(fit.coef_[0][1]))
    calibrated = CalibratedScorer(base=base, base_spec=base_spec, coefficients=coefficients)
    sizes = Counter(item.group for item in items)
    alone = [i for i in kept if sizes[items[i].group] == 1]
    calibrated.discrimination = within_model_discrimination(
        [items[i].model or items[i].agent_id or "" for i in alone],
        [calibrated.calibrate(scores[i].value, items[i]) for i in alone], [labels[i] for i in alone])
    return calibrated


def within_model_discrimination(models: Sequence[str], probabilities: Sequence[float],
                                labels: Sequence[int]) -> float:
    """Tjur's coefficient of discrimination (mean probability of the right answers less that of the wrong ones)
    within each model, averaged over the models that have both, weighted by their answers; 0 when none has."""
    by_model: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for model, probability, label in zip(models, probabilities, labels, strict=True):
        by_model[model][0 if label else 1].append(probability)
    weighed = [(len(right) + len(wrong), float(np.mean(right)) - float(np.mean(wrong)))
               for right, wrong in by_model.values() if right and wrong]
    total = sum(weight for weight, _ in weighed)
    return max(0.0, sum(weight * gap for weight, gap in weighed) / total) if total else 0.0
