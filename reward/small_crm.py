"""The learned small CRM: a calibrated scikit-learn classifier over answer, step and peer features.

Trained on CPU in seconds from labelled records (see reward/features.py for what it looks at). Records
sharing a question form a group of peers at training time, exactly as the candidates of one subtask do at
scoring time. The agent's prior — its reputation when the scorer is given one, else its model's share
right in the training data — is a feature, so the CRM can weigh a usually-right model's answer against a
usually-wrong one's. The trained model is saved to a folder (joblib + JSON), never to the repository.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.features import (
    ANSWER_FEATURES,
    GROUP_FEATURES,
    Candidate,
    candidate_features,
    embed_texts,
)
from reso.reward.records import LabelledRecord, question_key

META_FILE = "small_crm.json"
MODEL_FILE = "classifier.joblib"
FORMAT_VERSION = 1


@dataclass(kw_only=True)
class SmallCRMConfig:
    """Settings of the small CRM; the defaults were chosen by grouped cross-validation on replay data."""

    classifier: str = field(default="hgb", metadata={"description": "'hgb' (gradient boosting) or 'logreg'"})
    learning_rate: float = 0.05
    max_depth: int | None = 3
    max_iter: int = 200
    c: float = field(default=1.0, metadata={"description": "inverse L2 strength of 'logreg'"})
    use_prior: bool = field(default=True, metadata={"description": "agent reputation / model share right"})
    use_embeddings: bool = field(default=False, metadata={"description": "MiniLM embedding of the answer"})
    calibration: str | None = field(default="sigmoid", metadata={"description": "'sigmoid', 'isotonic', None"})
    calibration_folds: int = 5
    seed: int = 0
    threads: int = field(
        default=1,
        metadata={"description": "OpenMP/BLAS threads; one is fastest at this size and never oversubscribes"},
    )


def candidates_from_records(records: Sequence[LabelledRecord]) -> list[Candidate]:
    """Candidates for the feature builder, grouped by question."""
    return [
        Candidate(
            question=r.instruction,
            answer=r.answer,
            group=question_key(r),
            model=r.model or r.agent_id,
        )
        for r in records
    ]


def candidates_from_items(items: Sequence[ScoreItem]) -> list[Candidate]:
    """Candidates for the feature builder, grouped by `ScoreItem.group` (else by subtask)."""
    return [
        Candidate(
            question=item.subtask,
            answer=item.answer,
            group=item.group if item.group is not None else item.subtask,
            model=item.model or item.agent_id or None,
            reputation=item.reputation,
        )
        for item in items
    ]


class SmallCRM:
    """A small learned reward model: `fit` on labelled records, `predict` probabilities of being right."""

    def __init__(self, config: SmallCRMConfig | None = None) -> None:
        self.config = config or SmallCRMConfig()
        self.model_priors: dict[str, float] = {}
        self.base_rate: float = 0.5
        self.n_train: int = 0
        self._estimator: Any = None

    @property
    def feature_names(self) -> list[str]:
        names = list(ANSWER_FEATURES) + list(GROUP_FEATURES)
        if self.config.use_prior:
            names += ["prior", "peer_prior_max"]
        if self.config.use_embeddings:
            names += [f"emb_{i}" for i in range(384)]
        return names

    def _prior(self, candidate: Candidate) -> float:
        if candidate.reputation is not None and math.isfinite(candidate.reputation):
            return float(min(max(candidate.reputation, 0.0), 1.0))
        return self.model_priors.get(candidate.model or "", self.base_rate)

    def features(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The feature matrix of `candidates` (peers grouped by `Candidate.group`)."""
        blocks = [candidate_features(candidates)]
        if self.config.use_prior:
            priors = np.array([self._prior(c) for c in candidates])
            peer_max = np.zeros(len(candidates))
            groups: dict[str, list[int]] = {}
            for index, candidate in enumerate(candidates):
                groups.setdefault(candidate.group, []).append(index)
            for members in groups.values():
                for i in members:
                    others = [priors[j] for j in members if j != i]
                    peer_max[i] = max(others) if others else priors[i]
            blocks.append(np.stack([priors, peer_max], axis=1))
        if self.config.use_embeddings:
            blocks.append(embed_texts(candidates))
        return np.hstack(blocks)

    def _make_estimator(self, groups: np.ndarray) -> Any:
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        cfg = self.config
        if cfg.classifier == "hgb":
            base: Any = HistGradientBoostingClassifier(
                learning_rate=cfg.learning_rate,
                max_depth=cfg.max_depth,
                max_iter=cfg.max_iter,
                random_state=cfg.seed,
            )
        elif cfg.classifier == "logreg":
            base = make_pipeline(StandardScaler(), LogisticRegression(C=cfg.c, max_iter=5000))
        else:
            raise ValueError(f"classifier {cfg.classifier!r}: expected 'hgb' or 'logreg'")
        folds = min(cfg.calibration_folds, len(set(groups.tolist())))
        if cfg.calibration is None or folds < 2:
            return base
        # Calibration folds split by question so a question's peers never sit on both sides.
        splits = list(GroupKFold(n_splits=folds).split(np.zeros(len(groups)), groups=groups))
        return CalibratedClassifierCV(base, method=cfg.calibration, cv=splits)

    def fit(self, records: Sequence[LabelledRecord]) -> SmallCRM:
        """Learn from labelled records.

        Args:
            records: answers with 0/1 labels; records sharing `question_id` are scored as peers.

        Returns:
            self, fitted.

        Raises:
            ValueError: no records, or only one label value among them.
        """
        if not records:
            raise ValueError("no records to train on")
        labels = np.array([r.label for r in records], dtype=int)
        if labels.min() == labels.max():
            raise ValueError(f"all {len(records)} training records have label {labels[0]}; need both 0 and 1")
        self.base_rate = float(labels.mean())
        per_model: dict[str, list[int]] = {}
        for record in records:
            per_model.setdefault(record.model or record.agent_id or "", []).append(record.label)
        per_model.pop("", None)
        # Smoothed towards the base rate so a model seen a handful of times gets no extreme prior.
        self.model_priors = {
            model: (sum(values) + 5 * self.base_rate) / (len(values) + 5) for model, values in per_model.items()
        }
        candidates = candidates_from_records(records)
        features = self.features(candidates)
        groups = np.array([c.group for c in candidates])
        from threadpoolctl import threadpool_limits

        self._estimator = self._make_estimator(groups)
        with threadpool_limits(limits=self.config.threads):
            self._estimator.fit(features, labels)
        self.n_train = len(records)
        return self

    def predict_candidates(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """Probability that each candidate is right."""
        if self._estimator is None:
            raise RuntimeError("SmallCRM is not fitted: call fit() or SmallCRM.load()")
        if not candidates:
            return np.zeros(0)
        from threadpoolctl import threadpool_limits

        features = self.features(candidates)
        with threadpool_limits(limits=self.config.threads):
            return self._estimator.predict_proba(features)[:, 1]

    def predict_records(self, records: Sequence[LabelledRecord]) -> np.ndarray:
        """Probability that each record's answer is right (labels are not looked at)."""
        return self.predict_candidates(candidates_from_records(records))

    def save(self, directory: Path | str) -> Path:
        """Write the fitted model to `directory` (created): small_crm.json + classifier.joblib."""
        import joblib
        import sklearn

        if self._estimator is None:
            raise RuntimeError("SmallCRM is not fitted: nothing to save")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        joblib.dump(self._estimator, directory / MODEL_FILE)
        meta = {
            "kind": "small",
            "format_version": FORMAT_VERSION,
            "sklearn_version": sklearn.__version__,
            "config": asdict(self.config),
            "feature_names": self.feature_names,
            "model_priors": self.model_priors,
            "base_rate": self.base_rate,
            "n_train": self.n_train,
        }
        (directory / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: Path | str) -> SmallCRM:
        """Read a model written by `save`.

        Raises:
            FileNotFoundError: the folder has no small_crm.json or classifier.joblib.
            ValueError: the metadata is not a small CRM's or has an unknown format version.
        """
        import joblib

        directory = Path(directory)
        meta_path = directory / META_FILE
        if not meta_path.is_file() or not (directory / MODEL_FILE).is_file():
            raise FileNotFoundError(f"{directory}: not a small CRM folder (needs {META_FILE} and {MODEL_FILE})")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{meta_path}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
        if meta.get("kind") != "small" or meta.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"{meta_path}: field 'kind'/'format_version': expected small/{FORMAT_VERSION}, "
                f"got {meta.get('kind')}/{meta.get('format_version')}"
            )
        crm = cls(SmallCRMConfig(**meta["config"]))
        crm.model_priors = {str(k): float(v) for k, v in meta["model_priors"].items()}
        crm.base_rate = float(meta["base_rate"])
        crm.n_train = int(meta["n_train"])
        crm._estimator = joblib.load(directory / MODEL_FILE)
        return crm


def is_small_crm_dir(path: Path | str) -> bool:
    """Whether `path` is a folder written by `SmallCRM.save`."""
    return (Path(path) / META_FILE).is_file()


class SmallCRMScorer(Scorer):
    """Scores candidates with a saved small CRM; the items of one group (subtask) are each other's peers."""

    name = "small"

    def __init__(self, directory: Path | str | None = None, *, model: SmallCRM | None = None) -> None:
        if model is None:
            if directory is None:
                raise ValueError("SmallCRMScorer needs a model folder or a fitted SmallCRM")
            model = SmallCRM.load(directory)
        self.model = model

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        scores: list[Score | None] = [
            Score(0.0, "empty answer") if not item.answer.strip() else None for item in items
        ]
        live = [i for i, s in enumerate(scores) if s is None]
        if live:
            try:
                values = self.model.predict_candidates(candidates_from_items([items[i] for i in live]))
            except Exception as exc:  # noqa: BLE001 - a scorer never raises on bad answers
                return [s or Score(0.0, f"small CRM failed: {type(exc).__name__}: {exc}") for s in scores]
            for i, value in zip(live, values):
                scores[i] = Score(float(value)) if math.isfinite(value) else Score(0.0, "non-finite score")
        return [s for s in scores if s is not None]

