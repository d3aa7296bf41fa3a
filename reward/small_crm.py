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

Every setting is chosen by cross-validation grouped by question on the training records
(`reward/crm_search.py`), and the answer model's out-of-fold logits are what the group model learns
from, so it never sees an answer model's verdict on that model's own training answers. The fitted model
is saved to a folder (joblib + JSON), never to the repository.
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

from reso.agents.profiles import portable_model
from reso.reward.answer_features import SOLUTION_FEATURES, Solution, read_solution
from reso.reward.base import Score, ScoreItem, Scorer, failed_score
from reso.reward.crm_search import (
    ANSWER_GRID,
    EMBEDDING_GRID,
    GROUP_GRID,
    boosted_trees,
    choose,
    grouped_folds,
    logistic,
)
from reso.reward.features import (
    PEER_FEATURES,
    Candidate,
    candidates_from_items,
    candidates_from_records,
    embed_texts,
    peer_features,
    random_groups,
)
from reso.reward.flat_trees import SMALL_BATCH, TreeScorer
from reso.reward.records import LabelledRecord

META_FILE = "small_crm.json"
MODEL_FILE = "classifier.joblib"
FORMAT_VERSION = 2
PRIOR_FEATURES = ("prior", "prior_known")
# Characters of an answer's working that its embedding reads (MiniLM reads 256 tokens at most).
_EMBED_CHARS = 1500


@dataclass(kw_only=True)
class SmallCRMConfig:
    """Settings of the small CRM; `fit(tune=True)` replaces the model settings by the cross-validated best."""

    answer_params: dict[str, Any] = field(
        default_factory=lambda: dict(ANSWER_GRID[0]), metadata={"description": "the answer model's trees"}
    )
    group_params: dict[str, Any] = field(
        default_factory=lambda: dict(GROUP_GRID[0]), metadata={"description": "the group model's trees"}
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


def _threads(limit: int) -> Any:
    """A context that caps OpenMP/BLAS threads at `limit`. The libraries are found once per process:
    `threadpool_limits` looks them up on every call (3 ms, most of a one-answer prediction in the engine)."""
    return _thread_controller().limit(limits=limit)


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(values, -30, 30)))


class SmallCRM:
    """A small learned reward model: `fit` on labelled records, `predict_candidates` probabilities."""

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

    def _priors(self, candidates: Sequence[Candidate], hidden: np.ndarray | None = None) -> np.ndarray:
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

    def _view_inputs(self, view: str, candidates: Sequence[Candidate], solutions: Sequence[Solution]) -> np.ndarray:
        if view == "question_embedding":
            unique = list(dict.fromkeys(c.question for c in candidates))
            rows = dict(zip(unique, embed_texts(unique)))
            return np.stack([rows[c.question] for c in candidates])
        return embed_texts([f"{c.question}\n\n{s.body[-_EMBED_CHARS:]}" for c, s in zip(candidates, solutions)])

    def _answer_features(self, candidates: Sequence[Candidate], solutions: Sequence[Solution],
                         hidden: np.ndarray | None = None) -> np.ndarray:
        blocks = [np.asarray([s.features for s in solutions], dtype=np.float64).reshape(len(solutions), -1)]
        if self.config.use_prior:
            blocks.append(self._priors(candidates, hidden))
        for view in self.views:
            if view == "neural":
                column = self._views[view].decision_function([c.question for c in candidates],
                                                             [s.body for s in solutions])
            else:
                column = self._views[view].decision_function(self._view_inputs(view, candidates, solutions))
            blocks.append(column[:, None])
        return np.hstack(blocks)

    def _neural_stage(self, candidates: Sequence[Candidate], solutions: Sequence[Solution], labels: np.ndarray,
                      questions: np.ndarray) -> tuple[Any, np.ndarray]:
        """Two verifiers, each trained on half of the questions and scoring the other half (their
        out-of-fold logits); new answers get the mean of both."""
        from reso.reward.neural_verifier import CrossFitted, NeuralVerifier, NeuralVerifierConfig

        texts = [c.question for c in candidates], [s.body for s in solutions]
        oof = np.zeros(len(labels))
        verifiers = []
        for fold, (train, test) in enumerate(grouped_folds(questions, 2)):
            settings = {"seed": self.config.seed + fold, **self.config.neural_params}
            verifier = NeuralVerifier(NeuralVerifierConfig(**settings)).fit(
                [texts[0][i] for i in train], [texts[1][i] for i in train], labels[train]
            )
            oof[test] = verifier.decision_function([texts[0][i] for i in test], [texts[1][i] for i in test])
            verifiers.append(verifier)
        return CrossFitted(verifiers), oof

    def fit(self, records: Sequence[LabelledRecord], *, tune: bool = False,
            groups: Sequence[Sequence[int]] | None = None) -> SmallCRM:
        """Learn from labelled records.

        Args:
            records: answers with 0/1 labels; records sharing a question are peers.
            tune: choose the answer, group and embedding models' settings from their grids by grouped
                cross-validation (else the config's settings are used).
            groups: the group model's training groups, as indices into `records` (each group's answers
                to one question; `reward/staged_crm.py` draws them the way a run's fine stage asks);
                default: random groups of `config.group_sizes`.

        Returns:
            self, fitted.

        Raises:
            ValueError: no records, fewer than two questions (with folds), or one label value only.
        """
        if not records:
            raise ValueError("no records to train on")
        labels = np.array([r.label for r in records], dtype=int)
        cfg = self.config
        candidates = candidates_from_records(records)
        questions = np.array([c.group for c in candidates])
        # Fewer than two folds: no tuning, and the group model learns from in-sample answer logits.
        splits = grouped_folds(questions, cfg.folds) if cfg.folds >= 2 else None
        if labels.min() == labels.max():
            raise ValueError(f"all {len(records)} training records have label {labels[0]}; need both 0 and 1")
        self.base_rate = float(labels.mean())
        per_model: dict[str, list[int]] = {}
        for candidate, label in zip(candidates, labels):
            if candidate.model:
                per_model.setdefault(candidate.model, []).append(int(label))
        # Smoothed towards the base rate so a model seen a handful of times gets no extreme prior.
        self.model_priors = {
            model: (sum(values) + cfg.prior_smoothing * self.base_rate) / (len(values) + cfg.prior_smoothing)
            for model, values in per_model.items()
        }
        hidden = np.random.default_rng(cfg.seed).random(len(records)) < cfg.hidden_prior_share
        solutions = [read_solution(c.question, c.answer) for c in candidates]
        tune = tune and splits is not None
        with _threads(cfg.threads):
            blocks = [np.asarray([s.features for s in solutions], dtype=np.float64)]
            if cfg.use_prior:
                blocks.append(self._priors(candidates, hidden))
            self._views = {}
            for view in self.views:
                if view == "neural":
                    self._views[view], oof = self._neural_stage(candidates, solutions, labels, questions)
                    blocks.append(oof[:, None])
                    continue
                inputs = self._view_inputs(view, candidates, solutions)
                grid = EMBEDDING_GRID if tune else [cfg.embedding_params.get(view, EMBEDDING_GRID[0])]
                params, self._views[view], oof = self._stage(view, logistic, grid, inputs, labels, splits)
                cfg.embedding_params[view] = params
                blocks.append(oof[:, None])
            answer_x = np.hstack(blocks)
            grid = ANSWER_GRID if tune else [cfg.answer_params]
            cfg.answer_params, self._answer_model, oof = self._stage(
                "answer_model", boosted_trees, grid, answer_x, labels, splits
            )
            if not cfg.use_group:
                self.n_train = len(records)
                return self
            if groups is None:
                groups = random_groups(questions.tolist(), cfg.group_sizes, cfg.group_repeats, cfg.seed)
            elif not groups or any(not members for members in groups):
                raise ValueError("explicit training groups must be non-empty lists of record indices")
            rows = np.concatenate([np.asarray(members, dtype=int) for members in groups])
            group_labels = [f"{i}" for i, members in enumerate(groups) for _ in members]
            group_x = peer_features([solutions[i] for i in rows], group_labels, oof[rows], coincidence=cfg.coincidence)
            group_splits = grouped_folds(questions[rows], cfg.folds) if splits is not None else None
            grid = GROUP_GRID if tune else [cfg.group_params]
            cfg.group_params, self._group_model, _ = self._stage(
                "group_model", boosted_trees, grid, group_x, labels[rows], group_splits
            )
        self.n_train = len(records)
        return self

    def _stage(self, name: str, make: Any, grid: Sequence[dict[str, Any]], features: np.ndarray,
               labels: np.ndarray, splits: Sequence[tuple[np.ndarray, np.ndarray]] | None
               ) -> tuple[dict[str, Any], Any, np.ndarray]:
        """Choose a setting (by grouped cross-validation when there are folds), fit it on every row, and
        return the setting, the fitted model and its out-of-fold decision values (in-sample without folds)."""
        if splits is None:
            model = make(grid[0], self.config.seed).fit(features, labels)
            self.selection[name] = []
            return dict(grid[0]), model, model.decision_function(features)
        choice = choose(make, grid, features, labels, splits, seed=self.config.seed)
        self.selection[name] = choice.table
        return choice.params, make(choice.params, self.config.seed).fit(features, labels), choice.oof

    def answer_logits(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """The answer model's logit that each candidate is right, read on its own."""
        if self._answer_model is None:
            raise RuntimeError("SmallCRM is not fitted: call fit() or SmallCRM.load()")
        solutions = [read_solution(c.question, c.answer) for c in candidates]
        with _threads(self.config.threads):
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
            raise RuntimeError("SmallCRM is not fitted: call fit() or SmallCRM.load()")
        if not candidates:
            return np.zeros(0)
        solutions = [read_solution(c.question, c.answer) for c in candidates]
        with _threads(self.config.threads):
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
        config["group_sizes"] = tuple(config.get("group_sizes", ()))
        crm = cls(SmallCRMConfig(**config))
        crm.model_priors = {portable_model(str(k)): float(v) for k, v in meta["model_priors"].items()}
        crm.base_rate = float(meta["base_rate"])
        crm.n_train = int(meta["n_train"])
        crm.selection = dict(meta.get("selection") or {})
        fitted = joblib.load(directory / MODEL_FILE)
        crm._answer_model, crm._group_model, crm._views = fitted["answer"], fitted["group"], fitted["views"]
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
