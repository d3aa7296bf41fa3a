"""`reso synth mas | gsm8k | validate` through the root command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from reso.evals.cli import app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datasets"
runner = CliRunner()


def test_mas_writes_valid_items_deterministically(tmp_path: Path) -> None:
    pool = FIXTURES / "pool_math_sample.json"
    args = ["synth", "mas", "--pool", str(pool), "--size", "5", "--n", "6", "--seed", "3"]
    first = runner.invoke(app, [*args, "--out", str(tmp_path / "a.json")])
    assert first.exit_code == 0, first.output
    assert f"wrote 6 items to {tmp_path / 'a.json'}" in first.output
    runner.invoke(app, [*args, "--out", str(tmp_path / "b.json")])
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    items = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert [item["complexity"] for item in items] == [5] * 6
    checked = runner.invoke(app, ["synth", "validate", str(tmp_path / "a.json")])
    assert checked.exit_code == 0
    assert checked.output.strip().endswith("6 items, 6 valid, 0 invalid")


def test_gsm8k_writes_jsonl_that_validates(tmp_path: Path) -> None:
    out = tmp_path / "g" / "test.jsonl"
    result = runner.invoke(app, ["synth", "gsm8k", "--size", "3", "--n", "4", "--seed", "1", "--split", "test",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and all(json.loads(line)["synth"]["split"] == "test" for line in lines)
    checked = runner.invoke(app, ["synth", "validate", str(out), "--json"])
    assert checked.exit_code == 0
    assert json.loads(checked.output) == {"file": str(out), "items": 4, "valid": 4, "invalid": 0, "reasons": {}}


def test_validate_reports_invalid_items_and_exits_1(tmp_path: Path) -> None:
    items = json.loads((FIXTURES / "reso_mas_sample.json").read_text(encoding="utf-8"))
    items[2]["answer_number"] = "99"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    result = runner.invoke(app, ["synth", "validate", str(path)])
    assert result.exit_code == 1
    assert f"{path}: item 2: answer_number 99 is not the product of the sub-answers" in result.output
    assert result.output.strip().endswith("3 items, 2 valid, 1 invalid")


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["synth", "validate", str(tmp_path / "none.json")])
    assert missing.exit_code == 2
    assert missing.stderr.strip() == f"error: {tmp_path / 'none.json'}: no such file"
    wrong_pool = runner.invoke(app, ["synth", "mas", "--pool", str(FIXTURES / "reso_mas_sample.json"),
                                     "--out", str(tmp_path / "x.json")])
    assert wrong_pool.exit_code == 2
    assert "item 0: field 'problem_text_UNK': missing" in wrong_pool.stderr
    too_big = runner.invoke(app, ["synth", "mas", "--pool", str(FIXTURES / "pool_math_sample.json"),
                                  "--size", "9", "--out", str(tmp_path / "x.json")])
    assert too_big.exit_code == 2 and "size must be between 1 and the pool size 8" in too_big.stderr
    split = runner.invoke(app, ["synth", "gsm8k", "--split", "dev", "--out", str(tmp_path / "x.json")])
    assert split.exit_code == 2 and split.stderr.strip() == "error: --split must be 'train' or 'test', got 'dev'"
    assert not (tmp_path / "x.json").exists()


def test_synthesised_files_load_as_datasets(tmp_path: Path) -> None:
    from reso.evals.datasets import load_dataset

    out = tmp_path / "easy.json"
    assert runner.invoke(app, ["synth", "gsm8k", "--n", "3", "--seed", "2", "--out", str(out)]).exit_code == 0
    problems = load_dataset(str(out))
    assert [p.id for p in problems] == ["gsm8k-mas3-train-s2-0", "gsm8k-mas3-train-s2-1", "gsm8k-mas3-train-s2-2"]
    assert all(len(p.plan) == 4 and p.meta["synth"]["split"] == "train" for p in problems)


def test_mas_from_a_file_of_questions_writes_items_that_validate(tmp_path: Path) -> None:
    questions = FIXTURES / "questions_sample.jsonl"
    out = tmp_path / "linked.jsonl"
    result = runner.invoke(app, ["synth", "mas", "--questions", str(questions), "--size", "5", "--n", "8",
                                 "--seed", "4", "--split", "train", "--test-fraction", "0.3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"note: {questions}: 33 questions, 30 usable, 3 skipped "
                                    "(2 answers not exact numbers, 1 repeated questions); ")
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(items) == 8 and all(item["linked"] is True for item in items)
    assert {item["synth"]["split"] for item in items} == {"train"}
    assert {item["synth"]["test_fraction"] for item in items} == {0.3}
    checked = runner.invoke(app, ["synth", "validate", str(out), "--json"])
    assert checked.exit_code == 0
    assert json.loads(checked.output)["valid"] == 8


def test_mas_modes_mixed_or_misused_are_one_line_errors(tmp_path: Path) -> None:
    pool, questions = FIXTURES / "pool_math_sample.json", FIXTURES / "questions_sample.jsonl"
    out = str(tmp_path / "o.json")
    cases = [
        (["--pool", str(pool), "--questions", str(questions)], "error: give one of --pool (a sub-question pool "
         "with UNK(...) markers) or --questions (a file of questions with numeric answers), not both"),
        ([], "error: give one of --pool"),
        (["--pool", str(pool), "--split", "test"],
         "error: --split and --test-fraction apply to --questions only (a --pool is used whole)"),
        (["--questions", str(questions), "--split", "dev"], "error: --split must be 'train', 'test' or 'all', got 'dev'"),
        (["--questions", str(pool)], f"error: {pool}: item 0: field 'question': missing (this is a sub-question pool"),
        (["--pool", str(questions)], f"error: {questions}: item 0: field 'problem_UNK': missing, and no problem_text_UNK either (this is a file of "
                                     "plain questions"),
        (["--questions", str(tmp_path / "none.jsonl")], f"error: {tmp_path / 'none.jsonl'}: no such file"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["synth", "mas", *args, "--out", out])
        assert result.exit_code == 2, (args, result.output)
        assert len(result.stderr.strip().splitlines()) == 1
        assert result.stderr.startswith(message), (args, result.stderr)
    assert not Path(out).exists()
