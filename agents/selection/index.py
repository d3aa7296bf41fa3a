"""FAISS index over agent-profile embeddings: the retrieval half of the coarse selection stage.

Vectors are L2-normalised, so inner product equals cosine similarity. Pools below `hnsw_threshold`
agents get an exact `IndexFlatIP`; larger pools an approximate `IndexHNSWFlat` with inner-product metric
(search cost grows roughly with log N instead of N).

An index saved with `save(path)` writes the FAISS file plus a sidecar `<path>.json` holding the agent ids
and a fingerprint of (embedder name, ids, profile texts). `profile_index_for_pool` reloads a saved index
only when the fingerprint still matches the pool, otherwise it re-embeds and rebuilds; the selector keeps
the file next to the DADB as `<db>.faiss`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from reso.agents.profiles import Agent
from reso.agents.selection.embeddings import Embedder, normalize_rows

if TYPE_CHECKING:
    from reso.agents.pool import Pool

DEFAULT_HNSW_THRESHOLD = 5000
HNSW_NEIGHBOURS = 32
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH = 128


def profile_text(agent: Agent) -> str:
    """The text embedded for an agent: its role and its profile sentence, and its model's strengths when the
    pool states them."""
    text = f"{agent.role}: {agent.profile}"
    return f"{text} {agent.model.strengths}" if agent.model.strengths else text


def pool_fingerprint(agent_ids: Iterable[str], texts: Iterable[str], embedder_name: str) -> str:
    """SHA-256 over the embedder name and every (id, profile text) pair, in pool order."""
    digest = hashlib.sha256(embedder_name.encode("utf-8"))
    for agent_id, text in zip(agent_ids, texts, strict=True):
        digest.update(b"\x00" + agent_id.encode("utf-8") + b"\x01" + text.encode("utf-8"))
    return digest.hexdigest()


def index_path_for_db(db_path: str | Path) -> Path:
    """Where the profile index of a DADB file lives: `<db>.faiss` (plus `<db>.faiss.json`)."""
    return Path(f"{db_path}.faiss")


class ProfileIndex:
    """Agent ids plus a FAISS inner-product index of their profile vectors."""

    def __init__(self, agent_ids: Sequence[str], faiss_index: Any, fingerprint: str = "") -> None:
        if faiss_index.ntotal != len(agent_ids):
            raise ValueError(f"index holds {faiss_index.ntotal} vectors but {len(agent_ids)} agent ids were given")
        self.agent_ids = list(agent_ids)
        self.faiss_index = faiss_index
        self.fingerprint = fingerprint

    @classmethod
    def build(
        cls,
        agent_ids: Sequence[str],
        vectors: np.ndarray,
        *,
        hnsw_threshold: int = DEFAULT_HNSW_THRESHOLD,
        fingerprint: str = "",
    ) -> ProfileIndex:
        """Index `vectors` (one row per agent id; normalised here), flat below `hnsw_threshold`, HNSW above."""
        import faiss

        matrix = np.ascontiguousarray(normalize_rows(vectors))
        if matrix.shape[0] != len(agent_ids):
            raise ValueError(f"{matrix.shape[0]} vectors for {len(agent_ids)} agent ids")
        if len(set(agent_ids)) != len(agent_ids):
            raise ValueError("agent ids must be unique")
        dim = matrix.shape[1]
        index: faiss.Index
        if len(agent_ids) > hnsw_threshold:
            index = faiss.IndexHNSWFlat(dim, HNSW_NEIGHBOURS, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            index.hnsw.efSearch = HNSW_EF_SEARCH
        else:
            index = faiss.IndexFlatIP(dim)
        index.add(matrix)
        return cls(agent_ids, index, fingerprint)

    @property
    def kind(self) -> str:
        return "hnsw" if "HNSW" in type(self.faiss_index).__name__ else "flat"

    @property
    def dim(self) -> int:
        return int(self.faiss_index.d)

    def __len__(self) -> int:
        return len(self.agent_ids)

    def vectors(self) -> np.ndarray:
        """Every stored (normalised) profile vector, in pool order."""
        return self.faiss_index.reconstruct_n(0, self.faiss_index.ntotal)

    def search_positions(self, queries: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """Batched search returning arrays: cosines `(Q, m')` and pool positions `(Q, m')`, best first.

        `m' = min(m, len(self))`; HNSW may return fewer hits, marked with position -1.
        """
        matrix = np.ascontiguousarray(normalize_rows(queries))
        if matrix.shape[1] != self.dim:
            raise ValueError(f"query dimension {matrix.shape[1]} does not match the index dimension {self.dim}")
        m = max(1, min(int(m), len(self)))
        if self.kind == "hnsw":
            import faiss

            # Per-call parameters instead of mutating the shared index, so concurrent searches are safe.
            # faiss's own stubs (1.15) omit this class, which the library has.
            hnsw_params = faiss.SearchParametersHNSW  # type: ignore[attr-defined]
            params = hnsw_params(efSearch=max(HNSW_EF_SEARCH, 2 * m))
            return self.faiss_index.search(matrix, m, params=params)
        return self.faiss_index.search(matrix, m)

    def search(self, query: np.ndarray, m: int) -> list[tuple[str, float]]:
        """The `m` agents most similar to one query vector, as (agent_id, cosine), best first."""
        sims, positions = self.search_positions(np.asarray(query).reshape(1, -1), m)
        return [(self.agent_ids[p], float(s)) for s, p in zip(sims[0], positions[0], strict=True) if p >= 0]

    def save(self, path: str | Path) -> None:
        """Write the FAISS file to `path` and the ids and fingerprint to `<path>.json`."""
        import faiss

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        faiss.write_index(self.faiss_index, str(target))
        sidecar = {"fingerprint": self.fingerprint, "kind": self.kind, "agent_ids": self.agent_ids}
        Path(f"{target}.json").write_text(json.dumps(sidecar), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> ProfileIndex:
        """Read an index written by `save`.

        Raises:
            FileNotFoundError: The FAISS file or its sidecar is missing.
            ValueError: The sidecar is unreadable or does not match the FAISS file.
        """
        import faiss

        source = Path(path)
        sidecar_path = Path(f"{source}.json")
        if not source.is_file() or not sidecar_path.is_file():
            raise FileNotFoundError(f"{source}: profile index or its sidecar {sidecar_path.name} not found")
        try:
            sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
            agent_ids, fingerprint = sidecar["agent_ids"], sidecar["fingerprint"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"{sidecar_path}: unreadable index sidecar ({error})") from None
        return cls(agent_ids, faiss.read_index(str(source)), fingerprint)


def profile_index_for_pool(
    pool: Pool | Sequence[Agent],
    embedder: Embedder,
    cache_path: Path | None = None,
    *,
    hnsw_threshold: int = DEFAULT_HNSW_THRESHOLD,
) -> ProfileIndex:
    """The profile index of a pool: loaded from `cache_path` when it matches the pool, else built (and saved).

    Args:
        pool: The agents, in pool order.
        embedder: Embeds the agents' profile texts (see `profile_text`).
        cache_path: Optional FAISS file; rebuilt and overwritten when its fingerprint differs from the pool's.
        hnsw_threshold: Pool size above which the index is HNSW instead of exact.
    """
    agents = list(pool)
    ids = [agent.id for agent in agents]
    texts = [profile_text(agent) for agent in agents]
    fingerprint = pool_fingerprint(ids, texts, embedder.name)
    if cache_path is not None and Path(cache_path).is_file():
        try:
            cached = ProfileIndex.load(cache_path)
        except (FileNotFoundError, ValueError, RuntimeError):
            cached = None
        if cached is not None and cached.fingerprint == fingerprint and cached.agent_ids == ids:
            return cached
    index = ProfileIndex.build(ids, embedder.embed(texts), hnsw_threshold=hnsw_threshold, fingerprint=fingerprint)
    if cache_path is not None:
        index.save(cache_path)
    return index
