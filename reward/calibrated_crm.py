"""A CRM recalibrated on the training run's own records: Platt scaling with the model's record.

A CRM trained on other data (the many-model recordings of `reso crm train`: 54 models, two problem sets)
ranks answers well but is not calibrated for the pool it serves: on MATH level 5 it gives o1-mini's right
answers a mean of 0.87 where o1-mini is right 0.955 of the time, because most models it learned from are
far weaker there. Its score decides the adaptive fine stage's escalation (`Adaptive.confidence`), so a
score that is too low asks a dearer agent for nothing. Here the score is mapped to a probability of being
right by a logistic regression fitted on the training run's labelled records (every answer the training
run kept, scored in the groups a fine stage forms from them):

    p = sigmoid(a + b * logit(crm score) + c * logit(record)),

where `record` is how often the answer's model was right in those records (with a prior of one half, as
the reliability vote reads it). Three parameters, so a few hundred training subtasks fit them; the model's
record enters as a number, so a model met in training only rarely, or an agent's standing in the DADB at
scoring time, is read the same way.
"""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.features import groups_of
from reso.reward.records import LabelledRecord, question_key
from reso.reward.registry import build_scorer
from reso.reward.reliability_vote import reliability

CALIBRATION_FILE = "calibration.json"
_EPS = 1e-4


def _logit(p: float) -> float:
    p = min(max(p, _EPS), 1.0 - _EPS)
    return math.log(p / (1.0 - p))


def _features(score: float, item: ScoreItem) -> list[float]:
    return [_logit(score), _logit(reliability(item))]


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


class CalibratedScorer(Scorer):
    """Another scorer's values recalibrated by `sigmoid(a + b * logit(score) + c * logit(record))`."""

    name = "calibrated"

    def __init__(self, directory: Path | str | None = None, *, base: Scorer | None = None,
                 base_spec: str = "", coefficients: Sequence[float] = (0.0, 1.0, 0.0)) -> None:
        if directory is not None:
            saved = json.loads((Path(directory) / CALIBRATION_FILE).read_text())
            base_spec, coefficients = saved["base"], saved["coefficients"]
        if base is None:
            if not base_spec:
                raise ValueError("a calibrated scorer needs a base scorer or a saved calibration folder")
            base = build_scorer(base_spec)
        self.base = base
        self.base_spec = base_spec
        self.coefficients = tuple(float(c) for c in coefficients)
        self.blocking = base.blocking

    def calibrate(self, score: float, item: ScoreItem) -> float:
        a, b, c = self.coefficients
        x = a + b * _logit(score) + c * _logit(reliability(item))
        return 1.0 / (1.0 + math.exp(-max(min(x, 30.0), -30.0)))

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        scores = self.base.score_detailed(items)
        return [s if s.failed or s.reason else Score(self.calibrate(s.value, item))
                for s, item in zip(scores, items, strict=True)]

    def save(self, directory: Path | str) -> Path:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / CALIBRATION_FILE
        path.write_text(json.dumps({"base": self.base_spec, "coefficients": list(self.coefficients)}, indent=2))
        return path


def fit_calibration(base_spec: str, records: Sequence[LabelledRecord], largest: int = 3) -> CalibratedScorer:
    """Fit a, b, c on the groups of `records` (a training run's labelled answers) scored by `base_spec`."""
    from sklearn.linear_model import LogisticRegression

    base = build_scorer(base_spec)
    items, labels = training_groups(records, largest)
    scores = base.score_detailed(items)
    kept = [i for i, score in enumerate(scores) if not (score.failed or score.reason)]
    rows = np.array([_features(scores[i].value, items[i]) for i in kept])
    fit = LogisticRegression(C=1.0).fit(rows, np.array([labels[i] for i in kept]))
    coefficients = (float(fit.intercept_[0]), float(fit.coef_[0][0]), float(fit.coef_[0][1]))
    return CalibratedScorer(base=base, base_spec=base_spec, coefficients=coefficients)
