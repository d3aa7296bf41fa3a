"""Agents that share one profile vector, so that retrieval never splits them by their place in the pool.

A pool of models × roles gives every model the same profile in a role: forty models in four roles are four
distinct profiles, each held by forty agents with one vector. A plain top-M search returns the first M of a
tie in index order, so the models listed late in the pool file are never candidates and no amount of
exploration reaches them. Retrieval therefore narrows by what the profiles distinguish: the FAISS hits name
profiles, and every agent with the same vector as a hit comes along (`ProfileGroups.expand`). The bandit then
chooses among all of them, by their records. With distinct profiles (one agent each) this is the plain
top-M search.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["ProfileGroups"]


class ProfileGroups:
    """The pool positions of each distinct profile vector, and the group of each position."""

    def __init__(self, keys: Sequence[Hashable]) -> None:
        """`keys` holds one key per pool position; equal keys (a vector's bytes) make one group."""
        first_seen: dict[Hashable, int] = {}
        group_of = np.empty(len(keys), dtype=np.int64)
        for position, key in enumerate(keys):
            group_of[position] = first_seen.setdefault(key, len(first_seen))
        self.group_of = group_of
        self.count = len(first_seen)
        sizes = np.bincount(group_of, minlength=self.count)
        order = np.argsort(group_of, kind="stable")  # members in pool order within each group
        self._members = np.split(order, np.cumsum(sizes)[:-1]) if len(keys) else []
        self.shared = bool(sizes.max(initial=1) > 1)
        """Whether any two agents share a profile (else `expand` returns its input)."""

    @classmethod
    def of_vectors(cls, vectors: np.ndarray) -> ProfileGroups:
        """Groups of identical rows (the profile index's stored vectors)."""
        return cls([row.tobytes() for row in np.ascontiguousarray(vectors)])

    def expand(self, sims: np.ndarray, positions: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """The whole groups of the best hits, best first, until at least `m` agents are held.

        Args:
            sims: Cosines of the hits, best first (one row of a FAISS search).
            positions: Their pool positions (-1 for a missing hit).
            m: How many agents retrieval asks for.

        Returns:
            Cosines and positions of every member of each group met among the hits, group after group in the
            order of the hits; a group is taken whole or not at all, except that the groups already met
            stay whole even when together they exceed `m`.
        """
        if not self.shared:
            return sims, positions
        out_sims: list[np.ndarray] = []
        out_positions: list[np.ndarray] = []
        seen: set[int] = set()
        held = 0
        for sim, position in zip(sims, positions, strict=True):
            if position < 0 or held >= m:
                continue
            group = int(self.group_of[position])
            if group in seen:
                continue
            seen.add(group)
            members = self._members[group]
            out_positions.append(members)
            out_sims.append(np.full(members.size, sim, dtype=np.float32))
            held += members.size
        if not out_positions:
            return sims[:0], positions[:0]
        return np.concatenate(out_sims), np.concatenate(out_positions)
