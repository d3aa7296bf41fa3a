"""Profile index: flat and HNSW agree on small data, save/load, rebuild when the pool changes."""

from __future__ import annotations

import numpy as np
import pytest

from reso.agents.pool import pool_from_dict
from reso.agents.selection.embeddings import load_embedder
from reso.agents.selection.index import ProfileIndex, index_path_for_db, profile_index_for_pool


def _vectors(n: int, dim: int = 24, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_flat_and_hnsw_return_the_same_top_hits() -> None:
    ids = [f"a{i}" for i in range(300)]
    vectors = _vectors(300)
    flat = ProfileIndex.build(ids, vectors)
    hnsw = ProfileIndex.build(ids, vectors, hnsw_threshold=100)
    assert (flat.kind, hnsw.kind) == ("flat", "hnsw")
    for query in _vectors(10, seed=1):
        exact, approx = flat.search(query, 5), hnsw.search(query, 5)
        assert [a for a, _ in exact] == [a for a, _ in approx]
        np.testing.assert_allclose([s for _, s in exact], [s for _, s in approx], atol=1e-5)


def test_search_returns_cosines_best_first() -> None:
    vectors = np.eye(4, dtype=np.float32)
    index = ProfileIndex.build(["w", "x", "y", "z"], vectors)
    hits = index.search(np.array([0.0, 3.0, 4.0, 0.0]), 3)
    assert [a for a, _ in hits] == ["y", "x", "w"]
    np.testing.assert_allclose([s for _, s in hits], [0.8, 0.6, 0.0], atol=1e-6)
    assert len(index.search(np.ones(4), 99)) == 4
    with pytest.raises(ValueError, match="dimension"):
        index.search(np.ones(3), 2)


def test_build_rejects_mismatched_or_duplicate_ids() -> None:
    with pytest.raises(ValueError, match="vectors for"):
        ProfileIndex.build(["a"], _vectors(2))
    with pytest.raises(ValueError, match="unique"):
        ProfileIndex.build(["a", "a"], _vectors(2))


def test_save_and_load_round_trip(tmp_path) -> None:
    index = ProfileIndex.build(["p", "q", "r"], _vectors(3), fingerprint="abc")
    index.save(tmp_path / "pool.faiss")
    loaded = ProfileIndex.load(tmp_path / "pool.faiss")
    assert loaded.agent_ids == ["p", "q", "r"] and loaded.fingerprint == "abc"
    query = _vectors(1, seed=5)[0]
    assert loaded.search(query, 3) == index.search(query, 3)
    with pytest.raises(FileNotFoundError):
        ProfileIndex.load(tmp_path / "missing.faiss")


def _pool(profiles: dict[str, str]):
    return pool_from_dict({"agents": [
        {"id": agent_id, "model": {"spec": "tool:calculator"}, "role": agent_id, "profile": profile}
        for agent_id, profile in profiles.items()
    ]})


class CountingHash:
    def __init__(self) -> None:
        self.inner = load_embedder("hash:64")
        self.name, self.dim, self.texts = self.inner.name, 64, 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_index_next_to_the_db_is_reused_and_rebuilt_when_the_pool_changes(tmp_path) -> None:
    cache = index_path_for_db(tmp_path / "dadb.sqlite")
    assert cache.name == "dadb.sqlite.faiss"
    embedder = CountingHash()
    pool = _pool({"alg": "equations and polynomials", "geo": "triangles and circles"})
    first = profile_index_for_pool(pool, embedder, cache)
    assert embedder.texts == 2 and cache.is_file() and (tmp_path / "dadb.sqlite.faiss.json").is_file()
    again = profile_index_for_pool(pool, embedder, cache)
    assert embedder.texts == 2 and again.fingerprint == first.fingerprint
    changed = _pool({"alg": "equations and polynomials", "geo": "triangles, circles and solids"})
    rebuilt = profile_index_for_pool(changed, embedder, cache)
    assert embedder.texts == 4 and rebuilt.fingerprint != first.fingerprint
    grown = _pool({"alg": "equations and polynomials", "geo": "triangles, circles and solids", "p": "dice"})
    assert profile_index_for_pool(grown, embedder, cache).agent_ids == ["alg", "geo", "p"]
    assert ProfileIndex.load(cache).agent_ids == ["alg", "geo", "p"]
