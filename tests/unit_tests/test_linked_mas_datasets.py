"""The linked MAS splits registered by name, built on demand from the vendored many-model recordings."""

from __future__ import annotations

from pathlib import Path

import pytest

import reso.agents.defaults
from reso.evals.datasets import DatasetError, list_datasets, load_dataset
from reso.evals.datasets.problem import EXACT_REL_TOL

NAMES = [f"{base}-{level}-{split}" for base in ("math-l5-mas", "gsm8k-l-mas")
         for level in ("easy", "medium", "hard") for split in ("train", "test")]


def test_every_linked_split_is_registered() -> None:
    names = list_datasets()
    for name in NAMES:
        assert name in names
    assert "math_l5_dev.jsonl.gz" in names["math-l5-mas-hard-test"]
    assert "7 linked questions" in names["gsm8k-l-mas-hard-train"]


def test_a_missing_vendored_file_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reso.agents.defaults, "data_dir", lambda: tmp_path)
    with pytest.raises(DatasetError, match=r"dataset 'gsm8k-l-mas-easy-test' needs the vendored recordings "
                                           r"gsm8k_dev\.jsonl\.gz in the package data folder"):
        load_dataset("gsm8k-l-mas-easy-test")


def test_splits_build_linked_items_sharing_no_question(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reso.agents.defaults, "data_dir", lambda: shared_data / "zeroeval")
    test = load_dataset("math-l5-mas-easy-test")
    train = load_dataset("math-l5-mas-easy-train")
    assert (len(train), len(test)) == (200, 100)
    assert test[0].id == "math-l5-mas-easy-test-0"
    for problem in test:
        assert problem.meta["linked"] is True and problem.meta["complexity"] == 3
        assert problem.rel_tol == EXACT_REL_TOL  # exact answers: graded exactly
        assert problem.meta["synth"]["split"] == "test" and problem.meta["synth"]["seed"] == 0
        assert len([step for step in problem.plan if step["depends_on"]]) >= 2

    def questions(problems: list) -> set[str]:
        return {question for problem in problems for question in problem.meta["step_question_ids"].values()}

    assert questions(train) and questions(test) and not questions(train) & questions(test)
    assert test == load_dataset("math-l5-mas-easy-test")
