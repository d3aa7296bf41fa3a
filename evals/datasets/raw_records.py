"""Reading the raw records of a dataset file (a JSON list or JSON Lines, either one gzip-compressed), each
tagged with where it came from, so that any later complaint can name the file and the line or item index."""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass
from pathlib import Path

from reso.evals.datasets.problem import DatasetError


@dataclass(frozen=True)
class Record:
    """One raw record and its location: `path:line N` (JSON Lines) or `path: item N` (JSON list)."""

    data: object
    where: str
    index: int

    def error(self, field: str, message: str) -> DatasetError:
        """A DatasetError naming this record's location and the offending field."""
        return DatasetError(f"{self.where}: field '{field}': {message}")


def read_records(path: str | Path) -> list[Record]:
    """Every record of a `.json` file (a list of objects) or a JSON Lines file (one object per line);
    `.gz` files are decompressed first and read by the suffix before `.gz`.

    Raises:
        DatasetError: When the file is missing, empty, not gzip (for `.gz`), not UTF-8 or not valid JSON;
            the message names the file and line.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot read: {error.strerror or error}") from None
    suffix = path.suffix
    if suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise DatasetError(f"{path}: not a readable gzip file: {error}") from None
        suffix = path.with_suffix("").suffix
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # editors on Windows write a byte-order mark
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise DatasetError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start})"
        ) from None
    if not text.strip():
        raise DatasetError(f"{path}: empty file, no records")
    if suffix == ".json" or (suffix not in (".jsonl", ".ndjson") and text.lstrip().startswith("[")):
        return _json_list(path, text)
    return _json_lines(path, text)


def _json_list(path: Path, text: str) -> list[Record]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}:{error.lineno}: invalid JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a JSON list of items, got {type(data).__name__}")
    if not data:
        raise DatasetError(f"{path}: empty list, no records")
    return [Record(item, f"{path}: item {index}", index) for index, item in enumerate(data)]


def _json_lines(path: Path, text: str) -> list[Record]:
    records: list[Record] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise DatasetError(f"{path}:{number}: invalid JSON: {error.msg} (column {error.colno})") from None
        records.append(Record(data, f"{path}:{number}", len(records)))
    return records
