"""Dataset files compressed with gzip read like the plain ones, errors still naming file and line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reso.evals.datasets import DatasetError, load_dataset
from reso.evals.datasets.raw_records import read_records

ROWS = [{"id": "a", "question": "What is 2 + 3?", "answer": "5"},
        {"id": "b", "question": "What is 4 * 5?", "answer": "20"}]


def test_gzipped_json_lines_and_list_read_like_plain_files(tmp_path: Path) -> None:
    lines = tmp_path / "q.jsonl.gz"
    lines.write_bytes(gzip.compress("".join(json.dumps(row) + "\n" for row in ROWS).encode("utf-8")))
    listed = tmp_path / "q.json.gz"
    listed.write_bytes(gzip.compress(json.dumps(ROWS).encode("utf-8")))
    for path, where in ((lines, f"{lines}:2"), (listed, f"{listed}: item 1")):
        records = read_records(path)
        assert [record.data for record in records] == ROWS
        assert records[1].where == where
    assert [problem.answer for problem in load_dataset(lines)] == ["5", "20"]


def test_gzip_errors_name_the_file_and_the_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(b'{"id": "a", "question": "q?", "answer": "1"}\n{"id": \n'))
    with pytest.raises(DatasetError, match=r"broken\.jsonl\.gz:2: invalid JSON"):
        read_records(broken)
    latin = tmp_path / "latin.jsonl.gz"
    latin.write_bytes(gzip.compress(b'{"id": "a"}\n{"id": "caf\xe9"}\n'))
    with pytest.raises(DatasetError, match=r"latin\.jsonl\.gz:2: not valid UTF-8"):
        read_records(latin)
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_text('{"id": "a"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"plain\.jsonl\.gz: not a readable gzip file"):
        read_records(plain)
    empty = tmp_path / "empty.jsonl.gz"
    empty.write_bytes(gzip.compress(b"\n"))
    with pytest.raises(DatasetError, match=r"empty\.jsonl\.gz: empty file, no records"):
        read_records(empty)
