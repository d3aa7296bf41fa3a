"""Dataset loaders and the registry: release format, plain JSONL, GSM8K replay, malformed records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reso.evals.datasets import DatasetError, Problem, list_datasets, load_dataset, register_dataset
from reso.evals.datasets.problem import DEFAULT_REL_TOL, EXACT_REL_TOL

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
SAMPLE = FIXTURES / "reso_mas_sample.json"


def _steps(problem: Problem) -> list[tuple[str, list[str]]]:
    assert problem.plan is not None
    return [(step["id"], step["depends_on"]) for step in problem.plan]


def test_release_items_load_with_plan_in_topological_order() -> None:
    easy = load_dataset(str(SAMPLE))[0]
    assert easy.id == "reso_mas_sample-0"
    assert easy.answer == "298240.0"
    assert easy.question.startswith("The following is a complex question composed of multiple sub-questions:")
    assert _steps(easy) == [("1", []), ("0", ["1"]), ("2", ["1"]), ("final", ["0", "1", "2"])]
    assert easy.subtask_answers == {"1": "233", "0": "20", "2": "64", "final": "298240.0"}
    assert easy.plan[0]["instruction"] == (
        "Determine the largest possible integer $n$ such that $942.0!$ is divisible by $15^n$.")
    assert easy.plan[-1]["instruction"].startswith("Please calculate the value of Answer[0]*Answer[1]*Answer[2].")
    assert easy.meta["level"] == "easy"
    assert easy.meta["step_question_ids"]["1"] == "Number Theory 43.json"
    assert easy.meta["step_domains"]["0"] == "Prealgebra"


def test_several_parents_and_multi_line_sub_questions() -> None:
    medium = load_dataset(str(SAMPLE))[1]
    assert _steps(medium) == [("0", []), ("4", ["0"]), ("2", ["0", "4"]), ("3", ["2", "4"]), ("1", ["0", "3"]),
                              ("final", ["0", "1", "2", "3", "4"])]
    assert "the sum of Answer[0, 3] to the number" in medium.plan[4]["instruction"]
    assert "\n" in medium.plan[4]["instruction"]
    assert medium.subtask_answers["2"] == "3.5"
    assert medium.answer == "5119027200.0"
    assert medium.meta["level"] == "medium"


def test_scibench_items_carry_units_per_step() -> None:
    scibench = load_dataset(str(SAMPLE))[2]
    assert _steps(scibench)[:3] == [("1", []), ("0", ["1"]), ("2", ["0"])]
    assert scibench.answer == "11.63052"
    assert scibench.meta["step_units"]["1"] == "$\\mu \\mathrm{T}$"
    assert scibench.subtask_answers["0"] == "1.602"


def test_plain_jsonl_records() -> None:
    problems = load_dataset(str(FIXTURES / "plain_sample.jsonl"))
    assert [p.id for p in problems] == ["p1", "p2", "p3"]
    assert [p.answer for p in problems] == ["5", "14", "3.5"]
    assert problems[0].plan is None
    assert problems[1].plan == [
        {"id": "0", "instruction": "How many apples are in 3 boxes of 4?", "depends_on": []},
        {"id": "final", "instruction": "Add 2 to Answer[0].", "depends_on": ["0"]},
    ]
    assert problems[1].subtask_answers == {"0": "12", "final": "14"}
    assert problems[2].meta == {"source": "plain_sample", "topic": "arithmetic"}


def test_limit_keeps_the_first_items() -> None:
    assert [p.id for p in load_dataset(str(FIXTURES / "plain_sample.jsonl"), limit=2)] == ["p1", "p2"]


def test_gsm8k_replay_by_name() -> None:
    problems = load_dataset("gsm8k")
    assert len(problems) == 1000
    assert (problems[0].id, problems[0].answer) == ("gsm8k-test-0", "18")
    assert problems[0].question.startswith("Janet’s ducks lay 16 eggs per day.")
    assert problems[0].meta == {"source": "gsm8k"}


def test_gsm8k_mas_names_build_deterministically() -> None:
    first = load_dataset("gsm8k-mas-easy-test")
    assert len(first) == 100
    assert first == load_dataset("gsm8k-mas-easy-test")
    assert all(sorted(step["id"] for step in p.plan) == ["0", "1", "2", "final"] for p in first)
    assert all(p.plan[-1]["id"] == "final" and p.meta["linked"] is False for p in first)
    hard = load_dataset("gsm8k-mas-hard-train", limit=3)
    assert [len(p.plan) for p in hard] == [8, 8, 8]


def test_the_grading_tolerance_comes_with_the_data(tmp_path: Path) -> None:
    # Files that do not say keep the 1 % rule; GSM8K and composites of exact-answer questions are exact.
    assert {p.rel_tol for p in load_dataset(str(SAMPLE))} == {DEFAULT_REL_TOL}
    assert {p.rel_tol for p in load_dataset(str(FIXTURES / "plain_sample.jsonl"))} == {DEFAULT_REL_TOL}
    assert {p.rel_tol for p in load_dataset("gsm8k", limit=5)} == {EXACT_REL_TOL}
    assert {p.rel_tol for p in load_dataset("gsm8k-mas-easy-test")} == {EXACT_REL_TOL}
    path = tmp_path / "exact.jsonl"
    path.write_text('{"id": "a", "question": "q", "answer": "1", "rel_tol": 0}\n'
                    '{"id": "b", "question": "r", "answer": "2", "rel_tol": 0.05}\n')
    assert [p.rel_tol for p in load_dataset(str(path))] == [0.0, 0.05]
    items = json.loads(SAMPLE.read_text(encoding="utf-8"))
    release = tmp_path / "release.json"
    release.write_text(json.dumps([dict(items[0], rel_tol=EXACT_REL_TOL)]), encoding="utf-8")
    assert load_dataset(str(release))[0].rel_tol == EXACT_REL_TOL


def test_registry_lists_the_builtin_names() -> None:
    names = list_datasets()
    for name in ("math-mas-easy", "math-mas-medium", "math-mas-hard", "scibench-mas-easy", "scibench-mas-medium",
                 "gsm8k", "gsm8k-mas-easy-train", "gsm8k-mas-easy-test", "gsm8k-mas-medium-test",
                 "gsm8k-mas-hard-train"):
        assert name in names
    assert "MATH-MAS-Easy.json" in names["math-mas-easy"]


def test_register_a_path_and_a_builder() -> None:
    register_dataset("test-plain", FIXTURES / "plain_sample.jsonl")
    assert [p.id for p in load_dataset("test-plain")] == ["p1", "p2", "p3"]

    def two() -> list[Problem]:
        """Two tiny problems."""
        return [Problem("a", "1+1?", "2"), Problem("b", "2+2?", "4")]

    register_dataset("test-built", two)
    assert [p.answer for p in load_dataset("test-built", limit=1)] == ["2"]
    assert list_datasets()["test-built"] == "Two tiny problems."


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(DatasetError, match="unknown dataset 'no-such-set'.*math-mas-easy"):
        load_dataset("no-such-set")


def _data_root(base: Path) -> Path:
    target = base / "reso-mas"
    target.mkdir(parents=True)
    shutil.copy(SAMPLE, target / "MATH-MAS-Easy.json")
    return base


def test_data_root_explicit_then_env_then_relative_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = _data_root(tmp_path / "explicit")
    monkeypatch.setenv("RESO_DATA_ROOT", str(tmp_path / "nowhere"))
    assert len(load_dataset("math-mas-easy", data_root=explicit)) == 3
    with pytest.raises(DatasetError, match=r"reso-mas/MATH-MAS-Easy.json under the data root .*nowhere.*RESO_DATA_ROOT"):
        load_dataset("math-mas-easy")
    monkeypatch.setenv("RESO_DATA_ROOT", str(explicit))
    assert load_dataset("math-mas-easy")[0].id == "math-mas-easy-0"
    monkeypatch.delenv("RESO_DATA_ROOT")
    _data_root(tmp_path / "shared" / "data")
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    assert len(load_dataset("math-mas-easy")) == 3
    with pytest.raises(DatasetError, match="scibench-mas-easy.*Scibench-MAS-Easy.json.*default ../shared/data"):
        load_dataset("scibench-mas-easy")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"id": "a", "question": "q", "answer": "1"}\n{"id": "b", "question": \n', r"bad\.jsonl:2: invalid JSON"),
        (b'{"id": "a", "question": "q"}\n', r"bad\.jsonl:1: field 'answer': missing"),
        (b'{"id": "a", "question": "q", "answer": "1"}\n\n{"id": "b", "question": 5, "answer": "1"}\n',
         r"bad\.jsonl:3: field 'question': expected a non-empty string, got int"),
        (b'{"id": "a", "question": "q", "answer": [1]}\n', r"bad\.jsonl:1: field 'answer': expected a string or number"),
        (b'{"id": "a", "question": "q", "answer": "1"}\n{"id": "b", "question": "caf\xe9", "answer": "1"}\n',
         r"bad\.jsonl:2: not valid UTF-8 \(byte 0xe9"),
        (b"", r"bad\.jsonl: empty file"),
        (b"  \n\n", r"bad\.jsonl: empty file"),
        (b'["a"]\n', r"bad\.jsonl:1: expected a JSON object, got list"),
        (b'{"id": "a", "question": "q", "answer": "1", "plan": [{"id": "0"}]}\n',
         r"bad\.jsonl:1: field 'plan\[0\]\.instruction': missing"),
        (b'{"id": "a", "question": "q", "answer": "1", "rel_tol": 1}\n',
         r"bad\.jsonl:1: field 'rel_tol': expected a number in \[0, 1\), got 1"),
        (b'{"id": "a", "question": "q", "answer": "1", "rel_tol": "1%"}\n',
         r"bad\.jsonl:1: field 'rel_tol': expected a number in \[0, 1\), got '1%'"),
        (b'{"id": "a", "question": "q", "answer": "1"}\n{"id": "a", "question": "r", "answer": "2"}\n',
         r"item 1: field 'id': duplicate id 'a'"),
    ],
)
def test_malformed_jsonl_names_file_line_and_field(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(DatasetError, match=message):
        load_dataset(str(path))


def test_malformed_release_items_name_item_and_field(tmp_path: Path) -> None:
    items = json.loads(SAMPLE.read_text(encoding="utf-8"))
    path = tmp_path / "bad.json"
    broken = dict(items[0], gt_plan="['unterminated")
    path.write_text(json.dumps([items[1], broken]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.json: item 1: field 'gt_plan': not a Python list"):
        load_dataset(str(path))
    missing = {key: value for key, value in items[0].items() if key != "answer_number"}
    path.write_text(json.dumps([missing]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"item 0: field 'answer_number': missing"):
        load_dataset(str(path))
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(DatasetError, match="empty list"):
        load_dataset(str(path))
    path.write_text('[{"a": 1},', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad\.json:1: invalid JSON"):
        load_dataset(str(path))


def test_released_files_load(shared_data: Path) -> None:
    counts = {name: len(load_dataset(name, data_root=shared_data)) for name in
              ("math-mas-easy", "math-mas-medium", "math-mas-hard", "scibench-mas-easy", "scibench-mas-medium")}
    assert counts == {"math-mas-easy": 90, "math-mas-medium": 89, "math-mas-hard": 89,
                      "scibench-mas-easy": 107, "scibench-mas-medium": 80}
    hard = load_dataset("math-mas-hard", data_root=shared_data)
    assert all(len(p.plan) == 8 and p.plan[-1]["id"] == "final" for p in hard)
    first = load_dataset("math-mas-easy", data_root=shared_data)[0]
    assert _steps(first) == [("1", []), ("0", ["1"]), ("2", ["1"]), ("final", ["0", "1", "2"])]
    assert first.answer == "298240.0"
    medium = load_dataset("math-mas-medium", data_root=shared_data)[0]
    assert medium.answer == "5119027200.0"
    assert ("1", ["0", "3"]) in _steps(medium)
