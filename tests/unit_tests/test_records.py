"""Loading labelled CRM records: paper format (JSON list / JSONL), replay JSONL, errors, splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reso.reward.labelled_records import (
    LabelledRecord,
    RecordFormatError,
    load_records,
    question_key,
    split_by_question,
    write_records,
)

PAPER = [
    {"instruction": "What is 2 + 3?", "answer": "2 + 3 = 5", "label": 1},
    {
        "instruction": "What is 2 + 3?",
        "answer": "2 + 3 = 6",
        "label": 0,
        "context": "Answer[1] = 2",
        "agent_id": "a1",
        "model": "m1",
        "question_id": "q1",
        "reference": "5",
    },
    {"instruction": "Half of 8?", "answer": "4", "label": True, "question_id": 7},
]

REPLAY = [
    {
        "id": "g-0",
        "question": "Q zero?",
        "answer": "18",
        "responses": {"gpt": "9 * 2 = 18", "mix": "#### 17"},
        "correct": {"gpt": True, "mix": False},
    },
    {
        "id": "g-1",
        "question": "Q one?",
        "answer": "3",
        "responses": {"gpt": "3", "mix": "3"},
        "correct": {"gpt": True, "mix": True},
    },
]


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_paper_jsonl_reads_every_field(tmp_path: Path) -> None:
    records = load_records(_jsonl(tmp_path / "r.jsonl", PAPER))
    assert [r.label for r in records] == [1, 0, 1]
    assert records[0] == LabelledRecord(instruction="What is 2 + 3?", answer="2 + 3 = 5", label=1)
    second = records[1]
    assert (second.context, second.agent_id, second.model, second.question_id, second.reference) == (
        "Answer[1] = 2",
        "a1",
        "m1",
        "q1",
        "5",
    )
    assert records[2].question_id == "7"


def test_paper_json_list_equals_jsonl(tmp_path: Path) -> None:
    listed = tmp_path / "r.json"
    listed.write_text(json.dumps(PAPER, indent=2), encoding="utf-8")
    assert load_records(listed) == load_records(_jsonl(tmp_path / "r.jsonl", PAPER))


def test_replay_lines_become_one_record_per_answer(tmp_path: Path) -> None:
    records = load_records(_jsonl(tmp_path / "replay.jsonl", REPLAY))
    assert [(r.question_id, r.model, r.agent_id, r.label) for r in records] == [
        ("g-0", "gpt", "gpt", 1),
        ("g-0", "mix", "mix", 0),
        ("g-1", "gpt", "gpt", 1),
        ("g-1", "mix", "mix", 1),
    ]
    assert records[1].answer == "#### 17"
    assert records[1].instruction == "Q zero?"
    assert records[1].reference == "18"


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    records = load_records(_jsonl(tmp_path / "r.jsonl", PAPER))
    written = write_records(tmp_path / "out" / "copy.jsonl", records)
    assert load_records(written) == records
    first_line = json.loads(written.read_text(encoding="utf-8").splitlines()[0])
    assert first_line == {"instruction": "What is 2 + 3?", "answer": "2 + 3 = 5", "label": 1}


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"instruction": "q", "answer": "a"}, "label"),
        ({"instruction": "q", "answer": "a", "label": 2}, "label"),
        ({"instruction": "q", "label": 1}, "answer"),
        ({"instruction": 5, "answer": "a", "label": 1}, "instruction"),
        ({"instruction": "q", "answer": "a", "label": 1, "model": ["x"]}, "model"),
    ],
)
def test_malformed_paper_record_names_file_line_and_field(tmp_path: Path, row: dict, field: str) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [PAPER[0], row])
    with pytest.raises(RecordFormatError) as info:
        load_records(path)
    assert f"{path}:2" in str(info.value)
    assert repr(field) in str(info.value)
    assert (info.value.line, info.value.field) == (2, field)


def test_malformed_json_list_item_reports_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"instruction": "q", "answer": "a", "label": 1},\n  {"instruction": "q"}\n]\n')
    with pytest.raises(RecordFormatError, match=r"bad\.json:3: field 'answer'"):
        load_records(path)


def test_malformed_replay_names_the_model(tmp_path: Path) -> None:
    bad = dict(REPLAY[1], correct={"gpt": True})
    path = _jsonl(tmp_path / "replay.jsonl", [REPLAY[0], bad])
    with pytest.raises(RecordFormatError, match=r"replay\.jsonl:2: field 'correct\.mix': missing"):
        load_records(path)


def test_invalid_json_line_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(PAPER[0]) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(RecordFormatError, match=r"broken\.jsonl:3: invalid JSON"):
        load_records(path)


def test_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(RecordFormatError, match="nope.jsonl"):
        load_records(tmp_path / "nope.jsonl")


def test_split_selects_whole_questions(tmp_path: Path) -> None:
    records = load_records(_jsonl(tmp_path / "replay.jsonl", REPLAY))
    first = split_by_question(records, "first:1")
    last = split_by_question(records, "last:1")
    assert {question_key(r) for r in first} == {"g-0"} and len(first) == 2
    assert {question_key(r) for r in last} == {"g-1"} and len(last) == 2
    assert split_by_question(records, None) == records
    with pytest.raises(ValueError, match="first:N"):
        split_by_question(records, "middle:3")


def test_records_without_question_id_group_by_instruction() -> None:
    record = LabelledRecord(instruction="What is 2 + 3?", answer="5", label=1)
    assert question_key(record) == "What is 2 + 3?"


def test_replay_file_loads_with_labels_equal_to_correct(shared_data: Path) -> None:
    path = shared_data / "gsm8k-replay" / "gsm8k_replay_dev.jsonl"
    records = load_records(path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    expected = [(row["id"], model, int(ok)) for row in rows for model, ok in row["correct"].items()]
    assert len(records) == 2000
    assert [(r.question_id, r.model, r.label) for r in records] == expected
    assert sum(r.label for r in records) == sum(label for _, _, label in expected)
    train, test = split_by_question(records, "first:800"), split_by_question(records, "last:200")
    assert (len(train), len(test)) == (1600, 400)
    assert not {question_key(r) for r in train} & {question_key(r) for r in test}


STEPPED = [
    # ProcessBench's own layout: `problem`, `generator`, `label` is the first wrong step's index.
    {"id": "pb-0", "generator": "m7", "problem": "What is 2 + 3 + 4?",
     "steps": ["2 + 3 = 5.", "5 + 4 = 10.", "So the answer is \\boxed{10}."], "label": 1},
    # The layout: `first_error_step`, `answer` may be null.
    {"instruction": "What is 6 * 7?", "steps": ["6 * 7 = 42.", "The answer is 42."], "first_error_step": -1,
     "answer": None},
    # With `first_error_step`, a 0/1 `label` is the verdict on the final answer.
    {"instruction": "Half of 8?", "steps": ["8 / 2 = 5.", "Hmm, 4."], "first_error_step": 0, "label": 1},
]


def test_step_labelled_records_read_steps_and_first_error(tmp_path: Path) -> None:
    records = load_records(_jsonl(tmp_path / "pb.jsonl", STEPPED))
    assert [r.label for r in records] == [0, 1, 1]
    assert [r.first_error_step for r in records] == [1, -1, 0]
    first = records[0]
    assert (first.instruction, first.model, first.question_id) == ("What is 2 + 3 + 4?", "m7", "pb-0")
    assert first.answer == "2 + 3 = 5.\n\n5 + 4 = 10.\n\nSo the answer is \\boxed{10}."
    assert first.steps == tuple(STEPPED[0]["steps"])
    written = write_records(tmp_path / "back.jsonl", records)
    assert load_records(written) == records


@pytest.mark.parametrize(
    ("row", "field", "problem"),
    [
        ({"instruction": "q", "steps": []}, "steps", "non-empty list"),
        ({"instruction": "q", "steps": ["a", 3], "first_error_step": -1}, "steps", "non-empty list"),
        ({"instruction": "q", "steps": ["a"]}, "first_error_step", "missing"),
        ({"instruction": "q", "steps": ["a"], "first_error_step": 1}, "first_error_step", "below 1"),
        ({"problem": "q", "steps": ["a"], "label": -2}, "label", "got -2"),
    ],
)
def test_bad_step_records_name_line_and_field(tmp_path: Path, row: dict, field: str, problem: str) -> None:
    path = _jsonl(tmp_path / "pb.jsonl", [STEPPED[1], row])
    with pytest.raises(RecordFormatError, match=rf"pb\.jsonl:2: field '{field}': .*{problem}"):
        load_records(path)


def test_gzip_files_and_comma_separated_lists_load(tmp_path: Path) -> None:
    import gzip

    from reso.reward.labelled_records import load_record_files

    packed = tmp_path / "replay.jsonl.gz"
    packed.write_bytes(gzip.compress("".join(json.dumps(row) + "\n" for row in REPLAY).encode("utf-8")))
    plain = _jsonl(tmp_path / "r.jsonl", PAPER)
    assert load_records(packed) == load_records(_jsonl(tmp_path / "replay.jsonl", REPLAY))
    both = load_record_files(f"{packed}, {plain}")
    assert len(both) == 4 + 3 and both[-3:] == load_records(plain)
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_text("not gzip", encoding="utf-8")
    with pytest.raises(RecordFormatError, match=r"broken\.jsonl\.gz: not a readable gzip file"):
        load_record_files([plain, broken])


def test_hash_split_is_the_gsm8k_mas_split_and_partitions_questions() -> None:
    from reso.evals.synth.gsm8k import SPLIT_SALT, split_of
    from reso.reward.labelled_records import SPLIT_SALT as RECORDS_SALT
    from reso.reward.labelled_records import hash_side

    assert RECORDS_SALT == SPLIT_SALT
    records = [LabelledRecord(f"Question number {q}?", str(m), m % 2, question_id=str(q), model=str(m))
               for q in range(200) for m in range(2)]
    train, test = split_by_question(records, "train"), split_by_question(records, "test")
    assert len(train) + len(test) == len(records)
    assert not {question_key(r) for r in train} & {question_key(r) for r in test}
    assert 20 <= len({question_key(r) for r in test}) <= 60  # a fifth of 200, give or take
    for record in records[::7]:
        assert hash_side(record.instruction) == split_of(record.instruction, 0.2)
    wider = split_by_question(records, "test:0.5")
    assert {question_key(r) for r in test} <= {question_key(r) for r in wider}
    with pytest.raises(ValueError, match="'train', 'test'"):
        split_by_question(records, "test:2")
