"""Replay files: recorded answers of real models, one question per line, loaded once per process.

A replay file is JSONL, plain (`.jsonl`) or gzip-compressed (`.jsonl.gz`). Each line holds
`{"id", "question", "answer"?, "responses": {model: text}, "correct"?: {model: bool},
"extracted"?: {model: str | null}}`; other fields (`dataset`, `solution`, ...) are ignored. A model absent
from a line's `responses` has no recording of that question. `correct` and `extracted` are labels computed
once by whoever built the file, not what an agent reads.

A table is indexed by the normalised question text and matched exactly: a replay agent answers only the
question it has a recording of, never a different question that happens to be contained in the prompt.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO


class ReplayError(ValueError):
    """A replay file or replay spec is invalid (bad line, unknown model); the message names the file."""


_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})


def normalise_question(text: str) -> str:
    """The matching form of a question: NFKC, straight quotes, single spaces, lower case."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass(frozen=True, slots=True)
class Recording:
    """One recorded question: its id, text, reference answer, each model's response and the file's labels."""

    id: str
    question: str
    answer: str | None
    responses: Mapping[str, str]
    correct: Mapping[str, bool] = field(default_factory=dict)
    extracted: Mapping[str, str | None] = field(default_factory=dict)


class ReplayTable:
    """The recordings of one replay file, indexed by normalised question text.

    Build it with `replay_table(path)`, which loads each file once per process and shares the index
    between every replay model of that file.
    """

    def __init__(self, path: Path, recordings: Sequence[Recording]) -> None:
        self.path = path
        self.recordings = list(recordings)
        self._exact: dict[str, Recording] = {}
        for recording in self.recordings:
            self._exact.setdefault(normalise_question(recording.question), recording)
        # First-seen order: a roster built from the file lists its models in the order the file does.
        names = (model for recording in self.recordings for model in recording.responses)
        self.models: list[str] = list(dict.fromkeys(names))

    def __len__(self) -> int:
        return len(self.recordings)

    def find(self, text: str) -> Recording | None:
        """The recording whose question is `text` (after `normalise_question`), or None.

        Args:
            text: A question text; the caller cuts a prompt down to the question it asks
                (`reso.agents.adapters.replay_question.asked_question`).
        """
        key = normalise_question(text)
        return self._exact.get(key) if key else None

    def matching(self, pattern: re.Pattern[str]) -> list[Recording]:
        """The recordings whose normalised question `pattern` matches in full, in file order: a scan of
        every question, for the caller to cache
        (`reso.agents.adapters.replay_question.original_pattern` writes such patterns)."""
        return [recording for key, recording in self._exact.items() if pattern.fullmatch(key)]


def _string_map(data: dict, name: str, where: str, *, nullable: bool = False) -> dict:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(key, str) and (isinstance(item, str) or (nullable and item is None))
        for key, item in value.items()
    ):
        kind = "texts or null" if nullable else "recorded texts"
        raise ReplayError(f"{where}: field '{name}' must map model names to {kind}")
    return value


def _parse_line(line: str, path: Path, lineno: int) -> Recording:
    where = f"{path}:{lineno}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as error:
        raise ReplayError(f"{where}: invalid JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise ReplayError(f"{where}: expected a JSON object, got {type(data).__name__}")
    for name in ("id", "question"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            raise ReplayError(f"{where}: field '{name}' must be a non-empty string")
    if not isinstance(data.get("responses"), dict):
        raise ReplayError(f"{where}: field 'responses' must map model names to recorded texts")
    responses = _string_map(data, "responses", where)
    correct = data.get("correct") or {}
    if not isinstance(correct, dict) or not all(isinstance(value, bool) for value in correct.values()):
        raise ReplayError(f"{where}: field 'correct' must map model names to true/false")
    answer = data.get("answer")
    return Recording(
        id=data["id"],
        question=data["question"],
        answer=None if answer is None else str(answer),
        responses=responses,
        correct=correct,
        extracted=_string_map(data, "extracted", where, nullable=True),
    )


def _open_text(path: Path) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


@lru_cache(maxsize=16)
def _load_table(resolved: str, mtime_ns: int) -> ReplayTable:
    path = Path(resolved)
    recordings: list[Recording] = []
    seen: set[str] = set()
    try:
        with _open_text(path) as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                recording = _parse_line(line, path, lineno)
                if recording.id in seen:
                    raise ReplayError(f"{path}:{lineno}: duplicate id {recording.id!r}")
                seen.add(recording.id)
                recordings.append(recording)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:  # a damaged .gz, a folder, not UTF-8
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise ReplayError(f"{path}: cannot read the replay file: {reason}") from None
    if not recordings:
        raise ReplayError(f"{path}: the replay file has no recordings")
    return ReplayTable(path, recordings)


def replay_table(path: str | Path) -> ReplayTable:
    """Load (once per process, keyed by resolved path and modification time) the recordings of a file.

    Args:
        path: A replay JSONL file, plain or `.gz`.

    Returns:
        The shared, indexed table of the file.

    Raises:
        ReplayError: The file is missing or unreadable, or a line is invalid (the message names file, line).
    """
    resolved = Path(path).expanduser().resolve()
    try:
        mtime_ns = resolved.stat().st_mtime_ns
    except FileNotFoundError:
        raise ReplayError(f"{resolved}: replay file not found") from None
    return _load_table(str(resolved), mtime_ns)


def replay_correctness(path: str | Path) -> dict[tuple[str, str], bool]:
    """The recorded correctness labels of a replay file, as (question id, model) → correct: which models the
    recordings say answered each question right (a question is solvable when any did)."""
    table = replay_table(path)
    return {(rec.id, model): ok for rec in table.recordings for model, ok in rec.correct.items()}
