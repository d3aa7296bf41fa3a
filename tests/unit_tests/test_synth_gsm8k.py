"""GSM8K-MAS: verbatim sub-questions, exact product answers, and a train/test split by question."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reso.agents.defaults import default_replay_path
from reso.evals.datasets import DatasetError
from reso.evals.datasets.loaders import release_problem
from reso.evals.datasets.raw_records import Record
from reso.evals.datasets.release_format import parse_plan
from reso.evals.synth.gsm8k import build_gsm8k_mas, read_replay_questions, split_questions
from reso.evals.validate import validate_item

REPLAY = {row["id"]: row for row in (json.loads(line) for line in
                                     default_replay_path().read_text(encoding="utf-8").splitlines())}


def _problems(items: list[dict]):
    return [release_problem(Record(item, "t", i), id_prefix="t", source="gsm8k-mas") for i, item in enumerate(items)]


def test_split_is_by_question_and_covers_every_question() -> None:
    questions = read_replay_questions(default_replay_path())
    train = split_questions(questions, "train")
    test = split_questions(questions, "test")
    assert len(train) + len(test) == 1000
    assert 150 <= len(test) <= 250
    assert not {q["question"] for q in train} & {q["question"] for q in test}


def test_train_and_test_items_share_no_question_whatever_the_seeds() -> None:
    train = build_gsm8k_mas(default_replay_path(), 5, 150, seed=1, split="train")
    test = build_gsm8k_mas(default_replay_path(), 5, 60, seed=2, split="test")
    train_ids = {info["question_id"] for item in train for info in item["node_info"].values()}
    test_ids = {info["question_id"] for item in test for info in item["node_info"].values()}
    assert train_ids and test_ids and not train_ids & test_ids
    train_texts = {info["problem"] for item in train for info in item["node_info"].values()}
    assert not train_texts & {info["problem"] for item in test for info in item["node_info"].values()}


@pytest.mark.parametrize("size", [3, 5, 7])
def test_items_are_valid_verbatim_with_exact_product_answers(size: int) -> None:
    items = build_gsm8k_mas(default_replay_path(), size, 25, seed=size, split="test")
    for item, problem in zip(items, _problems(items), strict=True):
        assert validate_item(item) == []
        assert item["linked"] is False
        assert sorted(step["id"] for step in problem.plan) == [str(i) for i in range(size)] + ["final"]
        assert problem.plan[-1]["id"] == "final"
        assert problem.plan[-1]["instruction"].startswith(
            "Please calculate the value of " + "*".join(f"Answer[{i}]" for i in range(size)) + ".")
        ids = problem.meta["step_question_ids"]
        for step in problem.plan[:-1]:
            assert step["instruction"] == REPLAY[ids[step["id"]]]["question"]
            assert problem.subtask_answers[step["id"]] == REPLAY[ids[step["id"]]]["answer"]
            assert step["depends_on"] == [str(p) for p in sorted(item["node_info"][step["id"]]["in_edges"])]
        product = math.prod(int(REPLAY[ids[str(i)]]["answer"]) for i in range(size))
        assert problem.answer == str(product) == item["answer_number"]
        assert item["gt_subtask"][-1] == product
        assert len(parse_plan(item["gt_plan"])) == size + 1


def test_building_is_deterministic_by_seed() -> None:
    first = build_gsm8k_mas(default_replay_path(), 3, 20, seed=5, split="train")
    assert first == build_gsm8k_mas(default_replay_path(), 3, 20, seed=5, split="train")
    assert first != build_gsm8k_mas(default_replay_path(), 3, 20, seed=6, split="train")
    assert [item["id"] for item in first[:2]] == ["gsm8k-mas3-train-s5-0", "gsm8k-mas3-train-s5-1"]


def test_decimal_answers_multiply_exactly(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    rows = [{"id": f"q{i}", "question": f"Question number {i}?", "answer": "0.1" if i % 2 else "3"} for i in range(40)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for item in build_gsm8k_mas(path, 3, 10, seed=0, split="train"):
        tenths = sum(info["answer_val"] == 0.1 for info in item["node_info"].values())
        expected = {0: "27", 1: "0.9", 2: "0.03", 3: "0.001"}[tenths]
        assert item["answer_number"] == expected
        assert validate_item(item) == []


def test_bad_replay_files_are_clear_errors(tmp_path: Path) -> None:
    path = tmp_path / "replay.jsonl"
    path.write_text('{"id": "a", "question": "q?", "answer": "seven"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"replay\.jsonl:1: field 'answer': not a number"):
        build_gsm8k_mas(path, 1, 1, seed=0, split="train", test_fraction=0.01)
    with pytest.raises(ValueError, match="split must be 'train' or 'test'"):
        build_gsm8k_mas(default_replay_path(), 3, 1, seed=0, split="dev")  # type: ignore[arg-type]
