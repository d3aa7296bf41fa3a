"""The learned small CRM: an answer model stacked under a group model, both scikit-learn, CPU, minutes.

The answer model reads one answer on its own (`reward/answer_features.py`: form, truncation, hedging,
agreement of the final answer with the working, re-checked arithmetic, the question's notation) plus
the agent's prior: its reputation when the scorer is given one, else its model's share right in the
training records when the model is known, else nothing (a flag says so). A share of the training answers
has its prior hidden, so the CRM learns to judge answers of models it has never seen. Optional frozen
MiniLM embeddings of the question and of the answer enter as the out-of-fold logit of a logistic model
over them, and so may a small neural verifier (`reward/neural_verifier.py`, a cross-encoder trained on
half of the questions and scoring the other half). The group model then reads each answer among its peers (`reward/features.py`: the answer
model's logit, the vote posterior of its cluster of equal answers, the strongest rival cluster, …); it is
trained on random groups of one to all of a question's answers, so that one lone solution, the k
candidates of a subtask and forty recorded answers are all scored as probabilities of being right.

This module holds what a run needs: the settings, the features, prediction, save/load and the scorer.
Fitting is in `reward/training/small_crm_fit.py`: every setting is chosen there by cross-validation
grouped by question on the training records (`reward/training/crm_search.py`), and the answer model's
out-of-fold logits are what the group model learns from, so it never sees an answer model's verdict on
that model's own training answers. The fitted model is saved to a folder (joblib + JSON), never to the
repository.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reso.reward.answer_features import SOLUTION_FEATURES, Solution, read_solution
from reso.reward.base import Score, ScoreItem, Scorer, failed_score
from reso.reward.features import (
    PEER_FEATURES,
    Candidate,
    candidates_from_items,
    candidates_from_records,
    embed_texts,
    peer_features,
)
from reso.reward.flat_trees import SMALL_BATCH, TreeScorer
from reso.reward.labelled_records import LabelledRecord

META_FILE = "small_crm.json"
MODEL_FILE = "classifier.joblib"
FORMAT_VERSION = 2
PRIOR_FEATURES = ("prior", "prior_known")
# Characters of an answer's working that its embedding reads (MiniLM reads 256 tokens at most).
_EMBED_CHARS = 1500
# The answer and group models' tree settings when none are chosen: the first of the settings that fitting
# with `tune=True` searches (`reso.reward.training.crm_search`).
DEFAULT_ANSWER_PARAMS: dict[str, Any] = {"learning_rate": 0.05, "max_leaf_nodes": 7, "min_samples_leaf": 10,
                                         "l2_regularization": 1.0, "max_iter": 300}
DEFAULT_GROUP_PARAMS: dict[str, Any] = {"learning_rate": 0.05, "max_leaf_nodes": 7, "min_samples_leaf": 40,
                                        "l2_regularization": 1.0, "max_iter": 200}


@dataclass(kw_only=True)
class SmallCRMConfig:
    """Settings of the small CRM; fitting with `tune=True` replaces the model settings by the cross-validated
    best."""

    answer_params: dict[str, Any] = field(
        default_factory=lambda: dict(DEFAULT_ANSWER_PARAMS), metadata={"description": "the answer model's trees"}
    )
    group_params: dict[str, Any] = field(
        default_factory=lambda: dict(DEFAULT_GROUP_PARAMS), metadata={"description": "the group model's trees"}
    )
    use_prior: bool = field(default=True, metadata={"description": "agent reputation / model share right"})
    hidden_prior_share: float = field(
        default=1 / 3, metadata={"description": "share of training answers whose prior is hidden"}
    )
    prior_smoothing: float = field(default=5.0, metadata={"description": "pseudo-answers at the base rate"})
    question_embedding: bool = field(default=False, metadata={"description": "MiniLM of the question"})
    answer_embedding: bool = field(default=False, metadata={"description": "MiniLM of question + answer"})
    neural: bool = field(default=False, metadata={"description": "a small cross-encoder over question + answer"})
    neural_params: dict[str, Any] = field(
        default_factory=dict, metadata={"description": "NeuralVerifierConfig settings (size is a compute budget)"}
    )
    embedding_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    use_group: bool = field(default=True, metadata={"description": "score answers among their peers"})
    coincidence: float = field(default=0.2, metadata={"description": "q of the vote posterior feature"})
    group_sizes: tuple[int, ...] = field(
        default=(1, 2, 3, 3, 4, 5, 8, 0), metadata={"description": "training group sizes drawn; 0: all left"}
    )
    group_repeats: int = field(default=2, metadata={"description": "random groupings of each question"})
    folds: int = field(default=5, metadata={"description": "grouped folds for stacking and tuning"})
    seed: int = 0
    threads: int = field(
        default=1,
        metadata={"description": "OpenMP/BLAS threads; one is fastest at this size and never oversubscribes"},
    )


@functools.cache
def _thread_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def limit_threads(limit: int) -> Any:
    """A context that caps OpenMP/BLAS threads at `limit`. The libraries are found once per process:
    `threadpool_limits` looks them up on every call (3 ms, most of a one-answer prediction in the engine)."""
    return _thread_controller().limit(limits=limit)


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(values, -30, 30)))


class SmallCRM:
    """A small learned reward model: `predict_candidates` probabilities, once fitted
    (`reso.reward.training.small_crm_fit.fit_small_crm`) or loaded (`SmallCRM.load`)."""

    def __init__(self, config: SmallCRMConfig | None = None) -> None:
        self.config = config or SmallCRMConfig()
        self.model_priors: dict[str, float] = {}
        self.base_rate: float = 0.5
        self.n_train: int = 0
        self.selection: dict[str, Any] = {}
        self._answer_model: Any = None
        self._group_model: Any = None
        self._views: dict[str, Any] = {}
        self._deciders: dict[str, TreeScorer] = {}
        self.flat_batch = SMALL_BATCH
        """Groups of up to this many answers are scored with flattened trees (`reward/flat_trees.py`)."""

    @property
    def views(self) -> list[str]:
        """The embedding views in use, in column order."""
        return [name for name, on in (("question_embedding", self.config.question_embedding),
                                      ("answer_embedding", self.config.answer_embedding),
                                      ("neural", self.config.neural)) if on]

    @property
    def answer_feature_names(self) -> list[str]:
        names = list(SOLUTION_FEATURES)
        if self.config.use_prior:
            names += list(PRIOR_FEATURES)
        return names + [f"{view}_logit" for view in self.views]

    @property
    def feature_names(self) -> list[str]:
        return self.answer_feature_names + list(PEER_FEATURES)

    def priors(self, candidates: Sequence[Candidate], hidden: np.ndarray | None = None) -> np.ndarray:
        """Each candidate's prior and whether it is known: its reputation, else its model's share right in
        the training records, else the base rate, flagged unknown (as are the rows `hidden` marks)."""
        rows = []
        for index, candidate in enumerate(candidates):
            if hidden is not None and hidden[index]:
                rows.append((self.base_rate, 0.0))
            elif candidate.reputation is not None and math.isfinite(candidate.reputation):
                rows.append((float(min(max(candidate.reputation, 0.0), 1.0)), 1.0))
            elif candidate.model is not None and candidate.model in self.model_priors:
                rows.append((self.model_priors[candidate.model], 1.0))
            else:
                rows.append((self.base_rate, 0.0))
        return np.asarray(rows, dtype=np.float64).reshape(len(candidates), 2)

    def view_inputs(self, view: str, candidates: Sequence[Candidate], solutions: Sequence[Solution]) -> np.ndarray:
        """The embeddings an embedding view reads: of the question, or of the question and the answer's end."""
        if view == "question_embedding":
            unique = list(dict.fromkeys(c.question for c in candidates))
            rows = dict(zip(unique, embed_texts(unique)))
            return np.stack([rows[c.question] for c in candidates])
        return embed_texts([f"{c.question}\n\n{s.body[-_EMBED_CHARS:]}" for c, s in zip(candidates, solutions)])

    def _answer_features(self, candidates: Sequence[Candidate], solutions: Sequence[Solution],
                         hidden: np.ndarray | None = None) -> np.ndarray:
        blocks = [np.asarray([s.features for s in solutions], dtype=np.float64).reshape(len(solutions), -1)]
        if self.config.use_prior:
            blocks.append(self.priors(candidates, hidden))
        for view in self.views:
            if view == "neural":
                column = self._views[view].decision_function([c.question for c in candidates],
                                                             [s.body for s in solutions])
            else:
                column = self._views[view].decision_function(self.view_inputs(view, candidates, solutions))
            blocks.append(column[:, None])
        return np.hstack(blocks)

    def use_models(self, *, answer_model: Any, group_model: Any, views: dict[str, Any]) -> None:
        """Install fitted models: the answer model, the group model (None without `use_group`) and the
        embedding or neural views by name."""
        self._answer_model, self._group_model, self._views = answer_model, group_model, views

    def answer_logits(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The answer model's logit that each candidate is right, read on its own."""
        if self._answer_model is None:
            raise RuntimeError("SmallCRM is not fitted: call fit_small_crm() or SmallCRM.load()")
        solutions = [read_solution(c.question, c.answer) for c in candidates]
        with limit_threads(self.config.threads):
            return self._decider("answer").decision_values(self._answer_features(candidates, solutions))

    def _decider(self, stage: str) -> TreeScorer:
        """The fitted answer or group model's decision values (flattened trees for the engine's small groups)."""
        model = self._answer_model if stage == "answer" else self._group_model
        decider = self._deciders.get(stage)
        if decider is None or decider.model is not model or decider.small_batch != self.flat_batch:
            decider = self._deciders[stage] = TreeScorer(model, self.flat_batch)
        return decider

    def predict_candidates(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """Probability that each candidate is right, its peers being the candidates of its group."""
        if self._answer_model is None or (self.config.use_group and self._group_model is None):
            raise RuntimeError("SmallCRM is not fitted: call fit_small_crm() or SmallCRM.load()")
        if not candidates:
            return np.zeros(0)
        solutions = [read_solution(c.question, c.answer) for c in candidates]
        with limit_threads(self.config.threads):
            logits = self._decider("answer").decision_values(self._answer_features(candidates, solutions))
            if not self.config.use_group:
                return _sigmoid(logits)
            group_x = peer_features(solutions, [c.group for c in candidates], logits,
                                    coincidence=self.config.coincidence)
            return _sigmoid(self._decider("group").decision_values(group_x))

    def predict_records(self, records: Sequence[LabelledRecord]) -> np.ndarray:
        """Probability that each record's answer is right (labels are not looked at)."""
        return self.predict_candidates(candidates_from_records(records))

    def save(self, directory: Path | str) -> Path:
        """Write the fitted model to `directory` (created): small_crm.json + classifier.joblib."""
        import joblib
        import sklearn

        if self._answer_model is None:
            raise RuntimeError("SmallCRM is not fitted: nothing to save")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        joblib.dump({"answer": self._answer_model, "group": self._group_model, "views": self._views},
                    directory / MODEL_FILE)
        meta = {
            "kind": "small",
            "format_version": FORMAT_VERSION,
            "sklearn_version": sklearn.__version__,
            "config": asdict(self.config),
            "feature_names": self.feature_names,
            "model_priors": self.model_priors,
            "base_rate": self.base_rate,
            "n_train": self.n_train,
            "selection": self.selection,
        }
        (directory / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: Path | str) -> SmallCRM:
        """Read a model written by `save`.

        Raises:
            FileNotFoundError: the folder has no small_crm.json or classifier.joblib.
            ValueError: the metadata is not a small CRM's or has another format version.
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
                f"got {meta.get('kind')}/{meta.get('format_version')} (retrain with `reso crm train`)"
            )
        config = dict(meta["config"])
        config["group_sizes"] = tuple(config["group_sizes"])  # JSON holds it as a list
        crm = cls(SmallCRMConfig(**config))
        crm.model_priors = {str(k): float(v) for k, v in meta["model_priors"].items()}
        crm.base_rate = float(meta["base_rate"])
        crm.n_train = int(meta["n_train"])
        crm.selection = dict(meta["selection"])
        fitted = joblib.load(directory / MODEL_FILE)
        crm.use_models(answer_model=fitted["answer"], group_model=fitted["group"], views=fitted["views"])
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
                raise ValueError(f"{type(self).__name__} needs a model folder or a fitted SmallCRM")
            model = SmallCRM.load(directory)
        self.model = model

    label = "small CRM"
    """How failures name this scorer."""

    def candidates(self, items: Sequence[ScoreItem]) -> list[Any]:
        """The model's view of one subtask's (non-empty) answers."""
        return candidates_from_items(items)

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        scores: list[Score | None] = [
            Score(0.0, "empty answer") if not item.answer.strip() else None for item in items
        ]
        live = [i for i, s in enumerate(scores) if s is None]
        if live:
            try:
                values = self.model.predict_candidates(self.candidates([items[i] for i in live]))
            except Exception as exc:  # noqa: BLE001 - a scorer never raises on bad answers
                return [s or failed_score(f"{self.label}: {type(exc).__name__}: {exc}") for s in scores]
            for i, value in zip(live, values):
                scores[i] = Score(float(value)) if math.isfinite(value) else failed_score(f"{self.label}: non-finite score")
        return [s for s in scores if s is not None]
