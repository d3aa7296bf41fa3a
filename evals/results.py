"""The results file of an evaluation: one JSON line per finished item, appended as it completes.

A rerun with the same output folder reads what is there and skips those items, so a run killed at
item 900 of 1,000 resumes at 901 and no item is ever written twice. A line cut short by a crash (the
only way a line can be incomplete) is dropped on resume, and that item runs again.

One process at a time writes a results file: opening it takes an exclusive lock on `results.jsonl.lock`
(released by the operating system even when the process is killed), so a second run started into the
same folder by mistake is refused instead of interleaving its lines with the first's. Opened with a run's
provenance (`reso.evals.provenance`), the folder also refuses, before anything is rewritten, a rerun whose
method, dataset, pool or answer-changing settings differ from those of the run that wrote its rows.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TextIO

# What a resumed run reads back from every row.
ROW_FIELDS = ("id", "correct", "status", "usage", "latency_s", "steps")


class ResultsFormatError(ValueError):
    """A results folder this run cannot use (a damaged file, another run's rows): the message names the file,
    line and field."""


class ResultsBusyError(RuntimeError):
    """Another process is writing the same results file."""


class FolderClaim(Protocol):
    """What a results file asks of the run that opens it (`reso.evals.provenance.Provenance`)."""

    def claim(self, folder: Path, *, rows: int) -> None:
        """Record this run in `folder`, or refuse it (`ResultsFormatError`) when another run wrote its rows."""
        ...


def _lock(path: Path) -> TextIO | None:
    """An exclusive, non-blocking lock on `path` (None where the platform has no `fcntl`)."""
    if sys.platform == "win32":
        return None
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a", encoding="utf-8")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ResultsBusyError(f"{path.parent}: another run is writing into this folder; wait for it to "
                               "finish or choose another --out") from None
    return handle


def _read(path: Path) -> tuple[dict[str, dict[str, Any]], list[str], int]:
    """The rows of a results file by id, the lines that hold them, and how many lines were dropped (a last
    line cut short, a repeated id).

    Raises:
        ResultsFormatError: A line other than the last that is not JSON, or a row that lacks a field.
    """
    if not path.exists():
        return {}, [], 0
    lines = path.read_text(encoding="utf-8").splitlines()
    done: dict[str, dict[str, Any]] = {}
    kept: list[str] = []
    dropped = 0
    for number, line in enumerate(lines, start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # the one line a crash can cut short
                dropped += 1
                continue
            raise ResultsFormatError(f"{path}:{number}: not a JSON object (edited by hand?)") from None
        missing = [key for key in ROW_FIELDS if not isinstance(row, dict) or key not in row]
        if missing:
            raise ResultsFormatError(f"{path}:{number}: result row lacks field '{missing[0]}'")
        if row["id"] in done:
            dropped += 1
            continue
        done[row["id"]] = row
        kept.append(line)
    return done, kept, dropped


def finished_rows(path: Path) -> dict[str, dict[str, Any]]:
    """The rows a run resuming into `path` will skip, by item id: read as `ResultsFile` reads them, but
    without its lock and writing nothing (a progress display counts them before the run opens the file).

    Raises:
        ResultsFormatError: As `ResultsFile` would.
    """
    return _read(path)[0]


class ResultsFile:
    """Append-only JSONL of per-item results, keyed by item id; one writer at a time.

    With `provenance`, the folder's recorded provenance is checked (or written) once the rows are read and
    before anything is rewritten.

    Raises:
        ResultsBusyError: Another process holds the folder's results file open.
        ResultsFormatError: A damaged results file, or (`ProvenanceError`) rows of a different run.
    """

    def __init__(self, path: Path, *, provenance: FolderClaim | None = None) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}
        self.dropped_lines = 0
        self._handle: TextIO | None = None
        self._lock = _lock(path.with_name(f"{path.name}.lock"))
        try:
            kept = self._load()
            if provenance is not None:
                provenance.claim(path.parent, rows=len(self.done))
            if self.dropped_lines:
                # Rewrite without the partial line atomically, so what was complete is never lost.
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
                os.replace(tmp, self.path)
        except BaseException:
            self.close()
            raise

    def _load(self) -> list[str]:
        """Read the rows into `done`; returns the lines kept."""
        self.done, kept, self.dropped_lines = _read(self.path)
        return kept

    def append(self, row: dict[str, Any]) -> None:
        if row["id"] in self.done:
            raise ValueError(f"item {row['id']!r} is already in {self.path}")
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.done[row["id"]] = row

    def rows(self) -> Iterator[dict[str, Any]]:
        return iter(self.done.values())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._lock is not None:
            self._lock.close()  # closing the descriptor releases the lock
            self._lock = None

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def append_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append rows to a JSONL file and flush them to disk."""
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
