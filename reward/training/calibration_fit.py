"""Fitting the calibrated CRM's three parameters on a training run's labelled records.

Every group of one to three answers of one subtask that a fine stage could score is scored by the base CRM,
each answer carrying its model's record in those records, and a logistic regression over the logits of the
score and the record gives a, b and c of `CalibratedScorer` (`reward/calibrated_crm.py`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from reso.reward.base import ScoreItem
from reso.reward.calibrated_crm import CalibratedScorer, calibration_features
from reso.reward.features import groups_of
from reso.reward.records import LabelledRecord, question_key
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
    return CalibratedScorer(base=base, base_spec=base_spec, coefficients=coefficients)
