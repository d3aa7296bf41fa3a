"""An in-memory mirror of DADB statistics as numpy arrays in pool order, for the selector's hot path.

Selecting an agent needs visits, reward sums and cost sums of M candidates plus the pool's total visits.
Reading them from SQLite on every subtask would cost more than the whole FAISS search, so the selector
keeps arrays here. Each table remembers the `DADB.version` it was read at; before use it compares that
with the database's current version (one cheap `PRAGMA data_version` read) and reloads when anything
else wrote — another process, another selector, or a direct `DADB.record`. Writes made through
`record` are applied to the cached tables without a reload, so a selector's own updates never force one.

A table once handed out never changes: `record` replaces the tables it updates with updated copies. So one
cache serves the selector (which records through it) and the readers of the team's standings
(`reso.graphs.team.Team.standings`) alike, and what a reader was handed stays as it was read.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reso.agents.dadb.base import AgentDatabase


@dataclass
class StatsTable:
    """Statistics of every pool agent (globally or for one domain), aligned with pool positions."""

    visits: np.ndarray
    reward_sum: np.ndarray
    cost_sum: np.ndarray
    total_visits: float
    version: tuple[int, int]


@dataclass(frozen=True)
class Standings:
    """Each pool agent's overall record at one DADB version (one `StatsTable` over all domains), in the two
    forms the fine stage reads: an agent's smoothed reputation, and its model's record over every role on
    that model. Reading one costs nothing: take it once per subtask (`StatsCache.standings`, off the event
    loop) and use it on the event loop."""

    table: StatsTable
    positions: Mapping[str, int]
    same_model: Mapping[str, tuple[int, ...]]
    """agent id → the pool positions of every agent on its model (the agent's own included)."""

    def reputation(self, agent_id: str) -> float:
        """The paper's smoothed mean reward, (reward sum + 1) / (visits + 1): 1.0 before the first visit."""
        i = self.positions.get(agent_id)
        if i is None:  # not in the pool: no record, as for an agent never visited
            return 1.0
        return (float(self.table.reward_sum[i]) + 1.0) / (float(self.table.visits[i]) + 1.0)

    def model_record(self, agent_id: str) -> tuple[float, int]:
        """(reward sum, visits) of the agent's model over all its roles."""
        # A few positions: plain sums beat numpy's fancy indexing by an order of magnitude.
        same = self.same_model[agent_id]
        table = self.table
        return float(sum(table.reward_sum[i] for i in same)), int(sum(table.visits[i] for i in same))


class StatsCache:
    """Array views of a DADB for a fixed list of agent ids, refreshed when the database changes."""

    def __init__(self, dadb: AgentDatabase, agent_ids: Sequence[str]) -> None:
        self.dadb = dadb
        self._position = {agent_id: i for i, agent_id in enumerate(agent_ids)}
        self._size = len(agent_ids)
        self._tables: dict[str | None, StatsTable] = {}
        self._lock = threading.Lock()
        self._same_model: dict[str, tuple[int, ...]] | None = None

    @property
    def agent_ids(self) -> list[str]:
        """The agents this cache holds statistics of, in pool order."""
        return list(self._position)

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
        # N counts every recorded visit, including agents no longer in the pool, as the DADB does.
        return StatsTable(visits, reward_sum, cost_sum, float(self.dadb.total_visits(domain)), version)

    def table(self, domain: str | None = None) -> StatsTable:
        """Current statistics (reloaded first if the database changed since they were read)."""
        with self._lock:
            table = self._tables.get(domain)
            if table is None or table.version != self.dadb.version:
                table = self._tables[domain] = self._load(domain)
            return table

    def standings(self, models: Sequence[str]) -> Standings:
        """The overall record of every agent now, `models` giving each agent's model spec in pool order.

        Reads the DADB only when it changed since the last read (see `table`). Standings handed out stay as
        they were read, even when this cache records a visit afterwards (`record` copies).
        """
        table = self.table(None)
        with self._lock:
            if self._same_model is None:
                if len(models) != self._size:
                    raise ValueError(f"{len(models)} model specs for {self._size} agents")
                by_model: dict[str, list[int]] = {}
                for position, spec in enumerate(models):
                    by_model.setdefault(spec, []).append(position)
                self._same_model = {agent_id: tuple(by_model[models[i]]) for agent_id, i in self._position.items()}
            return Standings(table, self._position, self._same_model)

    def record(self, agent_id: str, reward: float, cost_usd: float, tokens: int, domain: str | None = None) -> bool:
        """Write one visit to the DADB and mirror it in the cached tables without a reload (as new tables:
        the ones handed out before stay as they were)."""
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
                elif key is None or key == domain:
                    self._tables[key] = _with_visit(table, position, reward, cost_usd, after)
                else:
                    self._tables[key] = dataclasses.replace(table, version=after)
            return True


def _with_visit(table: StatsTable, position: int | None, reward: float, cost_usd: float,
                version: tuple[int, int]) -> StatsTable:
    """A copy of `table` with one more visit (of the agent at `position`, when it is in the pool)."""
    visits, reward_sum, cost_sum = table.visits, table.reward_sum, table.cost_sum
    if position is not None:
        visits, reward_sum, cost_sum = visits.copy(), reward_sum.copy(), cost_sum.copy()
        visits[position] += 1
        reward_sum[position] += reward
        cost_sum[position] += cost_usd
    return StatsTable(visits, reward_sum, cost_sum, table.total_visits + 1, version)
