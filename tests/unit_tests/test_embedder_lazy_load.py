"""MiniLM loads its model on first need only: a warm disk cache answers without it, and threads racing to the
first embedding load it once."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from reso.agents.selection.embeddings import MINILM_DIM, CachedEmbedder, HashEmbedder, MiniLMEmbedder

TEXTS = ["Algebra: solve for x.", "How many eggs are left?"]


class StandIn:
    """Writes vectors into the disk cache under MiniLM's name, as an earlier run with the model would have."""

    name, dim = "minilm:all-MiniLM-L6-v2", MINILM_DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return HashEmbedder(MINILM_DIM).embed(texts)


def test_a_new_minilm_embedder_has_its_name_and_size_without_loading_the_model() -> None:
    embedder = MiniLMEmbedder()
    assert (embedder.name, embedder.dim, embedder.loaded) == ("minilm:all-MiniLM-L6-v2", 384, False)
    assert embedder.embed([]).shape == (0, 384) and not embedder.loaded


def test_texts_on_a_warm_disk_cache_never_load_the_model(tmp_path) -> None:
    written = CachedEmbedder(StandIn(), tmp_path)
    expected = written.embed(TEXTS)
    written.close()
    lazy = MiniLMEmbedder()
    vectors = CachedEmbedder(lazy, tmp_path).embed(list(reversed(TEXTS)))
    np.testing.assert_array_equal(vectors, expected[::-1])
    assert not lazy.loaded


class FakeModel:
    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        return np.ones((len(texts), MINILM_DIM), dtype=np.float32)


def test_threads_racing_to_the_first_embedding_load_the_model_once(monkeypatch) -> None:
    embedder = MiniLMEmbedder()
    loads: list[int] = []
    gate = threading.Barrier(4)

    def load() -> FakeModel:
        loads.append(1)
        return FakeModel()

    monkeypatch.setattr(embedder, "_load", load)

    results: list[np.ndarray] = []

    def worker() -> None:
        gate.wait()
        results.append(embedder.embed(["a question"]))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [1] and embedder.loaded
    assert len(results) == 4
    for vectors in results:
        assert vectors.shape == (1, MINILM_DIM)
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
