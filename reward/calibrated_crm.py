"""A CRM recalibrated on the training run's own records: Platt scaling with the model's record.

A CRM trained on other data (the many-model recordings of `reso crm train`: 54 models, two problem sets)
ranks answers well but is not calibrated for the pool it serves: on MATH level 5 it gives o1-mini's right
answers a mean of 0.87 where o1-mini is right 0.955 of the time, because most models it learned from are
far weaker there. Its score decides whether the fine stage asks another agent (`reso.graphs.priced_asking`),
so a score that is too low asks a dearer agent for nothing. Here the score is mapped to a probability of being
right by a logistic regression fitted on the training run's labelled records (every answer the training
run kept, scored in the groups a fine stage forms from them):

    p = sigmoid(a + b * logit(crm score) + c * logit(record)),

where `record` is how often the answer's model was right in those records (with a prior of one half, as
the reliability vote reads it). Three parameters, so a few hundred training subtasks fit them; the model's
record enters as a number, so a model met in training only rarely, or an agent's standing in the DADB at
scoring time, is read the same way. The fit is `fit_calibration` (`reward/training/calibration_fit.py`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.registry import build_scorer
from reso.reward.reliability_vote import reliability

CALIBRATION_FILE = "calibration.json"
_EPS = 1e-4


def logit(p: float) -> float:
    """log(p / (1 - p)), with p clamped to [1e-4, 1 - 1e-4] so that a certain score stays finite."""
    p = min(max(p, _EPS), 1.0 - _EPS)
    return math.log(p / (1.0 - p))


def calibration_features(score: float, item: ScoreItem) -> list[float]:
    """The calibration's inputs for one scored item: the logits of its score and of its model's record."""
    return [logit(score), logit(reliability(item))]


class CalibratedScorer(Scorer):
    """Another scorer's values recalibrated by `sigmoid(a + b * logit(score) + c * logit(record))`."""

    name = "calibrated"

    def __init__(self, directory: Path | str | None = None, *, base: Scorer | None = None,
                 base_spec: str = "", coefficients: Sequence[float] = (0.0, 1.0, 0.0),
                 discrimination: float = 0.0) -> None:
        if directory is not None:
            saved = json.loads((Path(directory) / CALIBRATION_FILE).read_text())
            base_spec, coefficients = saved["base"], saved["coefficients"]
            discrimination = float(saved.get("discrimination", 0.0))  # folders saved before it was measured
        if base is None:
            if not base_spec:
                raise ValueError("a calibrated scorer needs a base scorer or a saved calibration folder")
            base = build_scorer(base_spec)
        self.base = base
        self.base_spec = base_spec
        self.coefficients = tuple(float(c) for c in coefficients)
        self.discrimination = min(max(float(discrimination), 0.0), 1.0)
        self.blocking = base.blocking

    def calibrate(self, score: float, item: ScoreItem) -> float:
        a, b, c = self.coefficients
        x = a + b * logit(score) + c * logit(reliability(item))
        return 1.0 / (1.0 + math.exp(-max(min(x, 30.0), -30.0)))

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        scores = self.base.score_detailed(items)
        return [s if s.failed or s.reason else Score(self.calibrate(s.value, item))
                for s, item in zip(scores, items, strict=True)]

    def save(self, directory: Path | str) -> Path:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / CALIBRATION_FILE
        path.write_text(json.dumps({"base": self.base_spec, "coefficients": list(self.coefficients),
                                    "discrimination": self.discrimination}, indent=2))
        return path
