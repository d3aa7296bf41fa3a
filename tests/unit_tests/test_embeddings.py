"""Embedders: normalised float32 rows, the hashing embedder's determinism, the disk cache, offline MiniLM."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from reso.agents.selection.embeddings import CachedEmbedder, HashEmbedder, LangChainEmbedder, load_embedder


def test_hash_embedder_is_deterministic_normalised_and_sees_shared_words() -> None:
    first, second = load_embedder("hash:128"), load_embedder("hash:128")
    texts = ["solve the quadratic equation", "solve a quadratic equation for x", "organic reaction mechanism"]
    vectors = first.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (3, 128)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(vectors, second.embed(texts))
    assert vectors[0] @ vectors[1] > 0.3
    assert abs(vectors[0] @ vectors[2]) < 0.1
    assert first.name == "hash:128" and first.dim == 128


def test_hash_embedder_gives_scikit_learns_hashing_vectors() -> None:
    from sklearn.feature_extraction.text import HashingVectorizer

    rng = np.random.default_rng(0)
    alphabet = list("abcdefghij klmnopqrstuvwxyz ABC 0123 .,;:!?*[]()$ éßü漢字\n\t-")
    texts = ["", "   ", "a b c", "Please calculate the value of Answer[0]*Answer[1]*Answer[2].",
             "Ünïcödé ßtraße, naïve café", "x" * 500,
             *("".join(rng.choice(alphabet, size=int(rng.integers(0, 200)))) for _ in range(300))]
    for dim in (7, 256):
        sklearn = HashingVectorizer(n_features=dim, ngram_range=(1, 2), alternate_sign=True, norm=None,
                                    lowercase=True).transform(texts).toarray()
        expected = sklearn / np.maximum(np.linalg.norm(sklearn, axis=1, keepdims=True), 1e-300)
        np.testing.assert_allclose(HashEmbedder(dim).embed(texts), expected.astype(np.float32), rtol=1e-6, atol=1e-7)
    assert HashEmbedder(16).embed([]).shape == (0, 16)


@pytest.mark.parametrize("spec", ["hash:x", "hash:1", "bert", "openai:", "minilm:large"])
def test_bad_specs_are_rejected_with_the_spec_named(spec: str) -> None:
    with pytest.raises(ValueError, match="spec"):
        load_embedder(spec, cache=False)


class CountingEmbedder:
    """Counts how many texts reach the wrapped embedder."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(32)
        self.name, self.dim, self.calls = "counting", 32, 0

    def embed(self, texts):
        self.calls += len(texts)
        return self.inner.embed(texts)


def test_disk_cache_embeds_each_text_once_across_instances(tmp_path) -> None:
    counting = CountingEmbedder()
    cached = CachedEmbedder(counting, tmp_path)
    first = cached.embed(["a b", "c d", "a b"])
    assert counting.calls == 2
    np.testing.assert_array_equal(first[0], first[2])
    cached.close()
    again = CachedEmbedder(counting, tmp_path)
    np.testing.assert_array_equal(again.embed(["c d", "a b"]), first[[1, 0]])
    assert counting.calls == 2
    again.embed(["new text"])
    assert counting.calls == 3
    assert (tmp_path / "embeddings.sqlite").is_file()


def test_default_cache_dir_follows_reso_cache_dir(tmp_path, monkeypatch) -> None:
    from reso.agents.selection.embeddings import default_cache_dir

    monkeypatch.setenv("RESO_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "embeddings"


def test_langchain_embeddings_are_wrapped_and_normalised() -> None:
    embedder = LangChainEmbedder("fake", DeterministicFakeEmbedding(size=12))
    vectors = embedder.embed(["one", "two"])
    assert vectors.shape == (2, 12) and embedder.dim == 12
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_minilm_loads_offline_and_ranks_similar_texts_higher(tmp_path) -> None:
    embedder = load_embedder("minilm", cache_dir=tmp_path)
    assert embedder.dim == 384 and embedder.name == "minilm:all-MiniLM-L6-v2"
    query, near, far = embedder.embed([
        "Find the roots of the quadratic equation x^2 - 5x + 6 = 0.",
        "Algebra: equations, polynomials and solving for unknowns.",
        "Organic chemistry: reaction mechanisms of carbon compounds.",
    ])
    assert query @ near > query @ far + 0.1
    np.testing.assert_allclose(np.linalg.norm([query, near, far], axis=1), 1.0, atol=1e-5)
