"""Linked MAS composites from plain files of questions: the exact round trip a replay relies on, splits,
determinism, product answers, release-format validity and clear errors."""

from __future__ import annotations

import gzip
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from reso.agents.defaults import default_replay_path
from reso.evals.datasets import DatasetError
from reso.evals.datasets.loaders import release_problem
from reso.evals.datasets.numeric import parse_exact
from reso.evals.datasets.raw_records import Record
from reso.evals.datasets.release_format import LINKED_CONSTANT_RE, node_text, split_recorded
from reso.evals.synth.questions import build_linked_mas, read_questions, side_of
from reso.evals.validate import validate_item

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "questions_sample.jsonl"
ZEROEVAL = ("math_l5_dev.jsonl.gz", "gsm8k_dev.jsonl.gz")


def replayed_text(item: dict, node: str) -> str:
    """What a replay asks for a node given the right parent answers (the contract, written out again
    here): v = sum(parent answers) + adj, written as str(round(v)) when within 1e-6 relative of an
    integer, in place of the whole UNK_<node>(...) phrase; then the recorded suffix cut off."""
    info = item["node_info"][node]
    text, recorded = split_recorded(node_text(info))
    assert recorded == node

    def resolve(match) -> str:
        assert match.group("node") == node
        parents = [part.strip() for part in match.group("parents").split(",")]
        value = sum(float(item["node_info"][parent]["answer_val"]) for parent in parents) + float(match.group("adj"))
        assert abs(value - round(value)) <= 1e-6 * max(1.0, abs(value))
        return str(round(value))

    return LINKED_CONSTANT_RE.sub(resolve, text)


def assert_round_trip(items: list[dict]) -> int:
    """Every node of every item gives back its original question; returns how many were linked."""
    linked = 0
    for item in items:
        for node, info in item["node_info"].items():
            assert replayed_text(item, node) == info["problem"]
            links = LINKED_CONSTANT_RE.findall(node_text(info))
            assert len(links) == (1 if info["in_edges"] else 0)
            linked += len(links)
    return linked


def test_fixture_questions_are_read_with_skips_counted() -> None:
    source = read_questions(FIXTURE)
    assert source.records == 33 and len(source.questions) == 30
    assert source.skipped == {"answers not exact numbers": 2, "repeated questions": 1}
    answers = {question.question_id: question.answer for question in source.questions}
    assert answers["frac-1"] == Fraction(3, 4) and answers["frac-2"] == Fraction(10, 3)
    assert "surd-1" not in answers and "word-1" not in answers
    assert sum(question.constant is None for question in source.questions) == 4
    assert "2 skipped" not in source.summary() and "3 skipped" in source.summary()


@pytest.mark.parametrize("size", [1, 3, 5, 7])
def test_round_trip_gives_back_every_original_question(size: int) -> None:
    items = build_linked_mas(FIXTURE, size, 40, seed=size).items
    linked = assert_round_trip(items)
    assert linked == 40 * (size - 1)


def test_items_are_valid_with_exact_product_answers() -> None:
    items = build_linked_mas(FIXTURE, 5, 30, seed=2).items
    for index, item in enumerate(items):
        assert validate_item(item) == []
        assert item["linked"] is True
        assert item["synth"] == {"kind": "mas-questions", "size": 5, "seed": 2, "split": "all",
                                 "source": "questions_sample.jsonl", "test_fraction": None}
        nodes = item["node_info"]
        product = math.prod(parse_exact(nodes[str(node)]["answer_val"]) for node in range(5))
        exact = math.prod(_fixture_answers()[nodes[str(node)]["question_id"]] for node in range(5))
        assert parse_exact(item["answer_number"]) == pytest.approx(exact, rel=1e-12)
        assert product == pytest.approx(exact, rel=1e-12)
        assert item["gt_subtask"][:-1] == [nodes[str(node)]["answer_val"] for node in item["topological_order"]]
        problem = release_problem(Record(item, "t", index), id_prefix="t", source="t")
        assert problem.answer == item["answer_number"]
        for step in problem.plan[:-1]:
            assert step["depends_on"] == [str(parent) for parent in nodes[step["id"]]["in_edges"]]


def test_only_the_root_may_lack_a_constant() -> None:
    no_constant = {question.question_id for question in read_questions(FIXTURE).questions if question.constant is None}
    roots = 0
    for item in build_linked_mas(FIXTURE, 7, 60, seed=0).items:
        for info in item["node_info"].values():
            if info["question_id"] in no_constant:
                assert info["in_edges"] == [] and "question_vals" not in info
                roots += 1
    assert roots > 0


def test_train_and_test_share_no_question_and_all_uses_every_question() -> None:
    train = build_linked_mas(default_replay_path(), 3, 150, seed=1, split="train")
    test = build_linked_mas(default_replay_path(), 3, 60, seed=2, split="test")
    train_texts = {info["problem"] for item in train.items for info in item["node_info"].values()}
    test_texts = {info["problem"] for item in test.items for info in item["node_info"].values()}
    assert train_texts and test_texts and not train_texts & test_texts
    assert train.side + test.side == 1000 and 150 <= test.side <= 250
    assert all(item["synth"]["test_fraction"] == 0.2 for item in train.items)
    questions = read_questions(FIXTURE).questions
    assert side_of(questions, "all") == questions
    everything = build_linked_mas(FIXTURE, 3, 30, seed=0, split="all").items
    used = {info["question_id"] for item in everything for info in item["node_info"].values()}
    assert used == {question.question_id for question in questions}


def test_building_is_deterministic_by_seed() -> None:
    first = build_linked_mas(FIXTURE, 3, 20, seed=5).items
    assert first == build_linked_mas(FIXTURE, 3, 20, seed=5).items
    assert first != build_linked_mas(FIXTURE, 3, 20, seed=6).items
    assert [item["id"] for item in first[:2]] == ["questions_sample-mas3-all-s5-0", "questions_sample-mas3-all-s5-1"]


@pytest.mark.parametrize("name", ZEROEVAL)
def test_round_trip_on_every_linkable_question_of_the_many_model_files(shared_data: Path, name: str) -> None:
    path = shared_data / "zeroeval" / name
    build = build_linked_mas(path, 7, 2 * build_linked_mas(path, 7, 0, seed=0).linkable // 6 + 1, seed=3)
    assert assert_round_trip(build.items) == 6 * len(build.items)
    children = {info["question_id"] for item in build.items for info in item["node_info"].values()
                if info["in_edges"]}
    assert len(children) == build.linkable
    assert all(validate_item(item) == [] for item in build.items)


def test_bad_files_are_one_line_errors_naming_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"none\.jsonl: no such file"):
        build_linked_mas(tmp_path / "none.jsonl", 3, 1, seed=0)
    cases = {
        "noq.jsonl": ('{"id": "a", "question": "Add 2 and 3.", "answer": "5"}\n{"id": "b", "answer": "1"}\n',
                      r"noq\.jsonl:2: field 'question': missing"),
        "noa.jsonl": ('{"id": "a", "question": "Add 2 and 3."}\n', r"noa\.jsonl:1: field 'answer': missing"),
        "words.jsonl": ('{"id": "a", "question": "Add 2 and 3.", "answer": "five"}\n'
                        '{"id": "b", "question": "Add 4 and 3.", "answer": "\\\\text{seven}"}\n',
                        r"words\.jsonl: no usable question among 2 \(2 answers not exact numbers\)"),
        "pool.json": (json.dumps([{"problem": "Add 2 and 3.", "problem_UNK": "Add UNK(a constant) and 3."}]),
                      r"pool\.json: item 0: field 'question': missing \(this is a sub-question pool"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError, match=message):
            build_linked_mas(tmp_path / name, 1, 1, seed=0)
    few = tmp_path / "few.jsonl.gz"
    rows = [{"id": str(i), "question": f"What is $x^{i}$ at x = 1?", "answer": "1"} for i in range(4)]
    rows.append({"id": "n", "question": "Add 2 and 3.", "answer": "5"})
    few.write_bytes(gzip.compress("".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")))
    with pytest.raises(DatasetError, match=r"few\.jsonl\.gz \(all side\): only 1 of 5 questions have a safe "
                                           r"integer constant to link; an item of 3 needs 2"):
        build_linked_mas(few, 3, 1, seed=0)
    with pytest.raises(DatasetError, match=r"5 usable questions, fewer than the 7 an item needs"):
        build_linked_mas(few, 7, 1, seed=0)
    with pytest.raises(ValueError, match="split must be 'train', 'test' or 'all'"):
        build_linked_mas(FIXTURE, 3, 1, seed=0, split="dev")  # type: ignore[arg-type]


def _fixture_answers() -> dict[str, Fraction]:
    return {question.question_id: question.answer for question in read_questions(FIXTURE).questions}
