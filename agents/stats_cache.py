"""An in-memory mirror of DADB statistics as numpy arrays in pool order, for the selector's hot path.

Selecting an agent needs visits, reward sums and cost sums of M candidates plus the pool's total visits.
Reading them from SQLite on every subtask would cost more than the whole FAISS search, so the selector
keeps arrays here. Each table remembers the `DADB.version` it was read at; before use it compares that
with the database's current version (one cheap `PRAGMA data_version` read) and reloads when anything
else wrote — another process, another selector, or a direct `DADB.record`. Writes made through
`record` are applied to the arrays in place, so a selector's own updates never force a reload.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from reso.agents.dadb_base import AgentDatabase


@dataclass
class StatsTable:
    """Statistics of every pool agent (globally or for one domain), aligned with pool positions."""

    visits: np.ndarray
    reward_sum: np.ndarray
    cost_sum: np.ndarray
    total_visits: float
    version: tuple[int, int]


class StatsCache:
    """Array views of a DADB for a fixed list of agent ids, refreshed when the database changes."""

    def __init__(self, dadb: AgentDatabase, agent_ids: Sequence[str]) -> None:
        self.dadb = dadb
        self._position = {agent_id: i for i, agent_id in enumerate(agent_ids)}
        self._size = len(agent_ids)
        self._tables: dict[str | None, StatsTable] = {}
        self._lock = threading.Lock()
        self.reloads = 0

    def _load(self, domain: str | None) -> StatsTable:
        version = self.dadb.version
        visits = np.zeros(self._size)
        reward_sum = np.zeros(self._size)
        cost_sum = np.zeros(self._size)
        for agent_id, stats in self.dadb.stats(domain=domain).items():
            position = self._position.get(agent_id)
            if position is not None:
                visits[position] = stats.visits
                reward_sum[position] = stats.reward_sum
                cost_sum[position] = stats.cost_sum
        self.reloads += 1
        # N counts every recorded visit, including agents no longer in the pool, as the DADB does.
        return StatsTable(visits, reward_sum, cost_sum, float(self.dadb.total_visits(domain)), version)

    def table(self, domain: str | None = None) -> StatsTable:
        """Current statistics (reloaded first if the database changed since they were read)."""
        with self._lock:
            table = self._tables.get(domain)
            if table is None or table.version != self.dadb.version:
                table = self._tables[domain] = self._load(domain)
            return table

    def record(self, agent_id: str, reward: float, cost_usd: float, tokens: int, domain: str | None = None) -> bool:
        """Write one visit to the DADB and mirror it in the cached arrays without a reload."""
        with self._lock:
            before = self.dadb.version
            written = self.dadb.record(agent_id, reward, cost_usd, tokens, domain)
            if not written:
                return False
            after = self.dadb.version
            only_ours = after == (before[0] + 1, before[1])
            position = self._position.get(agent_id)
            for key, table in list(self._tables.items()):
                if not only_ours or table.version != before:
                    del self._tables[key]
                    continue
                if key is None or key == domain:
                    if position is not None:
                        table.visits[position] += 1
                        table.reward_sum[position] += reward
                        table.cost_sum[position] += cost_usd
                    table.total_visits += 1
                table.version = after
            return True
