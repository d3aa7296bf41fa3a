"""The DADB interface: what every agent database offers, whatever stores it (SQLite file or PostgreSQL).

`AgentDatabase` fixes the contract the selector, the statistics cache and the exactly-once ledger rely on:
atomic `record_many`, keyed exactly-once `record_batch`, train/test modes, reads per agent and domain, a
`version` that changes whenever the data may have changed, and export/import of whole rows as JSON. The
parts that do not depend on the store (validating updates, the JSON format, the mode switch, what
`record_many` and `record_batch` check before writing) live here once; `reso.agents.dadb.sqlite.DADB` (SQLite)
and `reso.agents.dadb.postgres.PostgresDADB` implement the rest (`_write_rows`, `_write_batch`, the reads).
"""

from __future__ import annotations

import json
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from reso.agents.dadb.stats import AgentStats


class Mode(StrEnum):
    """Whether a run's rewards are written to the DADB (`train`) or the DADB stays frozen (`test`)."""

    TRAIN = "train"
    TEST = "test"


GLOBAL = ""
FORMAT = "reso-dadb"
FIELDS = ("visits", "reward_sum", "reward_sq_sum", "cost_sum", "token_sum", "last_update")

Update = tuple[str, float, float, int, str | None]
# One upsert row: agent, domain ('' for the global row), reward, reward squared, cost, tokens, time.
Row = tuple[str, str, float, float, float, int, float]


class DADBError(ValueError):
    """The DADB cannot be opened or used (not a DADB, another shape, an unreachable server); names it."""


class DADBMissingError(DADBError):
    """No DADB where a test-mode run looks for one (a missing file, a database without the DADB's tables):
    only a training run creates a DADB, so a test run never reads an empty one made from a mistyped name."""

    def __init__(self, location: str) -> None:
        super().__init__(f"{location}: no DADB there; a test run only reads one that a training run made: check "
                         f"the name, or train one first with reso eval --mode train --db {location}")


def check_domain(domain: str | None) -> str:
    """The stored domain label: '' for None (the global row), else the non-empty label itself."""
    if domain is None:
        return GLOBAL
    if not isinstance(domain, str) or not domain:
        raise ValueError(f"domain must be a non-empty string or None, got {domain!r}")
    return domain


def check_mode(mode: str) -> Mode:
    try:
        return Mode(mode)
    except ValueError:
        raise ValueError(f"DADB mode must be one of {', '.join(Mode)}, got {mode!r}") from None


def update_rows(updates: Iterable[Update]) -> list[Row]:
    """Validated upsert rows: each visit's global row, plus its domain row when it has a domain.

    Raises:
        ValueError: A non-finite reward, a negative or non-finite cost, negative tokens, an empty agent or domain.
    """
    rows: list[Row] = []
    now = time.time()
    for agent_id, reward, cost_usd, tokens, domain in updates:
        if not agent_id:
            raise ValueError("agent_id must be a non-empty string")
        reward, cost_usd = float(reward), float(cost_usd)
        if not math.isfinite(reward):
            raise ValueError(f"reward for {agent_id!r} must be finite, got {reward}")
        if not math.isfinite(cost_usd) or cost_usd < 0:
            raise ValueError(f"cost_usd for {agent_id!r} must be finite and >= 0, got {cost_usd}")
        if int(tokens) < 0:
            raise ValueError(f"tokens for {agent_id!r} must be >= 0, got {tokens}")
        label = check_domain(domain)
        for row_domain in {GLOBAL, label}:
            rows.append((agent_id, row_domain, reward, reward * reward, cost_usd, int(tokens), now))
    return rows


def visits_of(rows: Sequence[Row]) -> int:
    """Visits a list of upsert rows adds (each visit has exactly one global row)."""
    return sum(1 for row in rows if row[1] == GLOBAL)


def stats_from_row(agent_id: str, values: Sequence[Any], domain: str | None) -> AgentStats:
    """The statistics stored as `values` (in FIELDS order), each passed by name so none can reach `domain`."""
    return AgentStats(agent_id, domain=domain, **dict(zip(FIELDS, values, strict=True)))


def stats_by_agent(rows: Iterable[Sequence[Any]], agent_ids: Sequence[str] | None,
                   domain: str | None) -> dict[str, AgentStats]:
    """Stored rows `(agent_id, *FIELDS)` as statistics by agent: every row's, or with `agent_ids` exactly those
    agents in that order, one without a row at zero."""
    found = {row[0]: stats_from_row(row[0], row[1:], domain) for row in rows}
    if agent_ids is None:
        return found
    return {agent_id: found.get(agent_id) or AgentStats(agent_id, domain=domain) for agent_id in agent_ids}


def stats_rows(stats: Iterable[AgentStats]) -> list[tuple[str, str, int, float, float, float, int, float]]:
    """Whole rows to load, in the column order of `agent_stats`."""
    return [(s.agent_id, check_domain(s.domain), int(s.visits), float(s.reward_sum), float(s.reward_sq_sum),
             float(s.cost_sum), int(s.token_sum), float(s.last_update)) for s in stats]


class AgentDatabase(ABC):
    """Per-agent reward and cost statistics, shared safely by threads and processes."""

    path: Path | None = None  # the SQLite file, None for memory or a server (the FAISS index lives beside it)

    def __init__(self, mode: Mode = Mode.TRAIN) -> None:
        self._mode: Mode = check_mode(mode)

    # -- mode ---------------------------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        return self._mode

    def freeze(self) -> None:
        """Switch to test mode: later `record` calls write nothing."""
        self._mode = Mode.TEST

    @property
    @abstractmethod
    def version(self) -> tuple[int, int]:
        """(writes through this object, a counter of other writers' commits): changes whenever the data
        may have changed; a write through this object alone moves only the first number, by one."""

    # -- writes -------------------------------------------------------------------------------------
    def record(self, agent_id: str, reward: float, cost_usd: float, tokens: int, domain: str | None = None) -> bool:
        """Add one visit of `agent_id` with its reward, cost and tokens (and to its domain row if given).

        Returns:
            True when written; False in test mode (nothing is written).

        Raises:
            ValueError: A non-finite reward, a negative or non-finite cost, negative tokens, an empty domain.
        """
        return self.record_many([(agent_id, reward, cost_usd, tokens, domain)]) == 1

    def record_many(self, updates: Iterable[Update]) -> int:
        """Record several visits `(agent_id, reward, cost_usd, tokens, domain)` in one transaction.

        Returns:
            The number of visits written (0 in test mode).
        """
        rows = update_rows(updates)
        if self._mode is Mode.TEST or not rows:
            return 0
        self._write_rows(rows)
        return visits_of(rows)

    def record_batch(self, key: str, updates: Iterable[Update]) -> bool:
        """Apply `updates` and remember `key`, in one transaction, unless `key` was applied before.

        A crash leaves either both the updates and the key or neither, so calling this again with the
        same key after a restart can never count a batch twice.

        Returns:
            True when applied now; False when the key was already applied or in test mode (nothing written).

        Raises:
            ValueError: An empty key, or an invalid update (see `record`).
        """
        if not key:
            raise ValueError("the batch key must be a non-empty string")
        rows = update_rows(updates)
        if self._mode is Mode.TEST:
            return False
        return self._write_batch(key, rows)

    @abstractmethod
    def _write_rows(self, rows: Sequence[Row]) -> None:
        """Upsert validated `rows` in one transaction, and count the write in `version`."""

    @abstractmethod
    def _write_batch(self, key: str, rows: Sequence[Row]) -> bool:
        """In one transaction, unless `key` is applied already: remember `key` with the visits `rows` add
        (`visits_of`), upsert `rows` and count the write in `version`. Whether it was applied now."""

    @abstractmethod
    def applied_keys(self, prefix: str = "") -> set[str]:
        """Keys of the batches applied so far (those starting with `prefix`)."""

    # -- reads --------------------------------------------------------------------------------------
    @abstractmethod
    def stats(self, agent_ids: Sequence[str] | None = None, domain: str | None = None) -> dict[str, AgentStats]:
        """Statistics per agent, globally or for one domain.

        Args:
            agent_ids: Agents to report; those never recorded get zero statistics. None: every recorded agent.
            domain: A domain label for per-(agent, domain) statistics; None for all domains together.
        """

    @abstractmethod
    def total_visits(self, domain: str | None = None) -> int:
        """Visits recorded over every agent (globally, or in one domain)."""

    @abstractmethod
    def domains(self) -> list[str]:
        """Domain labels that have statistics."""

    @abstractmethod
    def all_stats(self) -> list[AgentStats]:
        """Every row, global ones (domain None) first, in a stable order."""

    # -- export / import ----------------------------------------------------------------------------
    @abstractmethod
    def load_stats(self, stats: Iterable[AgentStats], *, replace: bool = True) -> int:
        """Write whole statistics rows (e.g. from an export), replacing the table's content by default.

        Loading is an explicit administrative step, so it is allowed in test mode too.
        """

    def export_json(self, path: str | Path) -> None:
        """Write every row to a JSON file (floats keep their exact value through `json`)."""
        document = export_document(self.all_stats())
        Path(path).write_text(json.dumps(document, indent=1), encoding="utf-8")

    def import_json(self, path: str | Path, *, replace: bool = True) -> int:
        """Load a file written by `export_json`; returns the number of rows loaded.

        Raises:
            ValueError: The file is not a DADB export, or a row has a missing or wrong field.
        """
        source = Path(path)
        try:
            document = json.loads(source.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}:{error.lineno}: invalid JSON: {error.msg}") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError(f"{source}: not a DADB export (expected \"format\": \"{FORMAT}\")")
        stats: list[AgentStats] = []
        for index, row in enumerate(document.get("stats", [])):
            try:
                stats.append(AgentStats(**row))
            except TypeError as error:
                raise ValueError(f"{source}: stats[{index}]: {error}") from None
        return self.load_stats(stats, replace=replace)

    # -- lifetime -----------------------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None:
        """Release the file or connection; the stored statistics stay."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def export_document(stats: Iterable[AgentStats], **extra: Any) -> dict[str, Any]:
    """The JSON document `export_json` writes and `import_json` reads: its format and version, `extra` keys
    (a provenance, say), then the rows."""
    return {"format": FORMAT, "version": 1, **extra, "stats": [asdict(s) for s in stats]}
