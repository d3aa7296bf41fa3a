"""Each model's chance of being right on this subtask, from its record on the nearest past subtasks.

The DADB keeps a model's record per role and domain, but on MATH level 5 a model right half the time is right
on some kinds of question and wrong on others. `QuestionSkills` keeps the training side's subtasks (their
embeddings, in a FAISS inner-product index over unit vectors) and which models answered each right or wrong,
and estimates a model's chance on a new subtask from the `neighbours` nearest past subtasks it answered, shrunk
towards its pooled record (the DADB's) with `prior` pseudo-answers:

    q(model, subtask) = (right among the nearest + prior × pooled) / (answered among the nearest + prior).

A model the nearest subtasks never saw keeps its pooled record. The index is fitted on labelled answers of
the training side (the pool's recordings, or a training run's records) and saved in a folder of its own
(`save`, `load`), which the settings name (`ReSoSettings.skills`); the fine stage reads it
(`reso.graphs.fine_stage`). Written here rather than as a scikit-learn nearest-neighbour model: the
estimate is a shrunk count per model over a FAISS search the selector's embeddings already feed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reso.agents.selection.embeddings import Embedder, normalize_rows

__all__ = ["NEIGHBOURS", "NEIGHBOUR_SHARE", "PRIOR", "QuestionSkills"]

NEIGHBOURS = 20
"""How many of the nearest past subtasks a model's record is read on, at least."""
NEIGHBOUR_SHARE = 0.08
"""... or this share of the past subtasks, when that is more: `reso bench routing --question-skills` (eight topics, 500 or 2,000
past questions, seeds 0-7) recovered more of a topic oracle's advantage with wider neighbourhoods, up to 8 %
of the past questions (2 %: 24 % of it at 2,000 questions, and a loss at 500; 8 %: 42 % and 13 %)."""
PRIOR = 10.0
"""Pseudo-answers of the model's pooled record that its record on the nearest subtasks is shrunk towards
(10 and 5 did alike on the same bench; the larger is the safer with few past subtasks)."""
_FILES = ("skills.json", "skills.npz")


@dataclass
class QuestionSkills:
    """Past subtasks as unit vectors, and which models were right (1), wrong (0) or silent (NaN) on each."""

    vectors: np.ndarray
    models: list[str]
    right: np.ndarray
    embedder_name: str
    neighbours: int | None = None
    """How many nearest past subtasks are read (None: `NEIGHBOURS`, or `NEIGHBOUR_SHARE` of them if more)."""
    prior: float = PRIOR
    embedder: Embedder | None = field(default=None, repr=False, compare=False)
    """What embeds a new subtask (`estimate_text`): the embedder the index was fitted with."""
    _index: Any = field(default=None, init=False, repr=False)
    _index_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.vectors = normalize_rows(np.asarray(self.vectors, dtype=np.float32))
        self.right = np.asarray(self.right, dtype=np.float64)
        if self.right.shape != (len(self.vectors), len(self.models)):
            raise ValueError(f"{self.right.shape} outcomes for {len(self.vectors)} subtasks and "
                             f"{len(self.models)} models")
        if self.neighbours is None:
            self.neighbours = max(NEIGHBOURS, round(NEIGHBOUR_SHARE * len(self.vectors)))
        if self.neighbours < 1 or self.prior < 0:
            raise ValueError(f"neighbours must be >= 1 and prior >= 0, got {self.neighbours} and {self.prior}")

    @classmethod
    def fit(cls, texts: Sequence[str], models: Sequence[str], labels: Sequence[int], embedder: Embedder,
            **options: Any) -> QuestionSkills:
        """From labelled answers, one per (text, model, label): every distinct subtask text once; a model
        answering one text several times counts by its share right there."""
        if not texts:
            raise ValueError("no labelled answers to fit question skills on")
        order = list(dict.fromkeys(texts))
        names = sorted(set(models))
        row, column = {text: i for i, text in enumerate(order)}, {name: j for j, name in enumerate(names)}
        right, answered = np.zeros((len(order), len(names))), np.zeros((len(order), len(names)))
        for text, model, label in zip(texts, models, labels, strict=True):
            right[row[text], column[model]] += float(label)
            answered[row[text], column[model]] += 1.0
        with np.errstate(invalid="ignore"):
            share = np.where(answered > 0, right / np.maximum(answered, 1.0), np.nan)
        return cls(np.asarray(embedder.embed(order)), names, share, embedder.name, embedder=embedder, **options)

    def _search(self, vector: np.ndarray) -> np.ndarray:
        import faiss

        # Sibling subtasks search from worker threads: the index is published only once it holds every vector
        # (a search of a half-built index finds no neighbour and silently falls back to the pooled record).
        with self._index_lock:
            if self._index is None:
                index = faiss.IndexFlatIP(self.vectors.shape[1])
                index.add(self.vectors)
                self._index = index
        query = normalize_rows(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        _, found = self._index.search(query, min(int(self.neighbours or NEIGHBOURS), len(self.vectors)))
        return found[0][found[0] >= 0]

    def estimate(self, vector: np.ndarray, pooled: Mapping[str, float]) -> dict[str, float]:
        """Each model of `pooled` (its pooled record by model name): its chance on the subtask embedded as
        `vector` (module docstring)."""
        near = self.right[self._search(vector)]
        column = {name: j for j, name in enumerate(self.models)}
        estimates = {}
        for model, record in pooled.items():
            if model not in column:
                estimates[model] = record
                continue
            seen = near[:, column[model]]
            seen = seen[~np.isnan(seen)]
            estimates[model] = float((seen.sum() + self.prior * record) / (len(seen) + self.prior)) \
                if len(seen) + self.prior > 0 else record
        return estimates

    def estimate_text(self, subtask: str, pooled: Mapping[str, float]) -> dict[str, float]:
        """`estimate` for the subtask text, embedded with the index's embedder."""
        if self.embedder is None:
            raise ValueError("question skills without an embedder: load them with one")
        return self.estimate(np.asarray(self.embedder.embed([subtask]))[0], pooled)

    def save(self, folder: Path | str) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"models": self.models, "embedder": self.embedder_name, "neighbours": self.neighbours,
                "prior": self.prior}
        (folder / _FILES[0]).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        np.savez_compressed(folder / _FILES[1], vectors=self.vectors, right=self.right)
        return folder

    @classmethod
    def load(cls, folder: Path | str, embedder: Embedder | None = None) -> QuestionSkills:
        """A saved index, with `embedder` when it is the one the index was fitted with, else that one loaded.

        Raises:
            ValueError: The folder holds no question skills, or damaged ones (naming the folder).
        """
        from reso.agents.selection.embeddings import embedder_spec, load_embedder

        folder = Path(folder)
        try:
            meta = json.loads((folder / _FILES[0]).read_text(encoding="utf-8"))
            arrays = np.load(folder / _FILES[1])
            name = str(meta["embedder"])
            skills = cls(arrays["vectors"], list(meta["models"]), arrays["right"], name,
                         neighbours=int(meta["neighbours"]), prior=float(meta["prior"]))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{folder}: not a question-skills folder ({error})") from None
        skills.embedder = (embedder if embedder is not None and embedder.name == name
                           else load_embedder(embedder_spec(name)))
        return skills
