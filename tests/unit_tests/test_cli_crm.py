"""`reso crm train` and `reso crm eval` end to end through the typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.reward.records import load_records, write_records
from reso.reward.small_crm import SmallCRM
from tests.unit_tests.test_small_crm import synthetic_records

runner = CliRunner()
KEYS = {"auc", "accuracy", "brier", "n", "auc_per_model", "auc_within_model_mean", "selection"}


def _invoke(*args: str) -> dict:
    result = runner.invoke(app, ["crm", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("crm")
    data = write_records(folder / "records.jsonl", synthetic_records(n_questions=80))
    summary = _invoke(
        "train", "--data", str(data), "--out", str(folder / "model"), "--split", "first:60", "--cv-folds", "3"
    )
    assert (summary["n"], summary["n_questions"]) == (120, 60)
    assert KEYS <= set(summary["cross_validation"])
    return data, folder / "model"


def test_eval_json_has_the_keys_and_sklearn_auc(synthetic: tuple[Path, Path]) -> None:
    data, model = synthetic
    result = _invoke("eval", "--model", str(model), "--data", str(data), "--split", "last:20", "--json")
    assert KEYS <= set(result)
    test = [r for r in load_records(data) if int(r.question_id[1:]) >= 60]
    scores = SmallCRM.load(model).predict_records(test)
    labels = [r.label for r in test]
    assert result["n"] == 40
    assert result["auc"] == pytest.approx(roc_auc_score(labels, scores))
    careful = [i for i, r in enumerate(test) if r.model == "careful"]
    assert result["auc_per_model"]["careful"] == pytest.approx(
        roc_auc_score([labels[i] for i in careful], scores[careful])
    )
    assert set(result["selection"]["always_model_accuracy"]) == {"careful", "hasty"}


def test_eval_blends_a_model_with_a_registry_scorer(synthetic: tuple[Path, Path]) -> None:
    data, model = synthetic
    args = ["eval", "--data", str(data), "--split", "last:20", "--json"]
    alone = _invoke(*args, "--model", "steps")
    blend = _invoke(*args, "--model", str(model), "--model", "steps", "--weight", "3", "--weight", "1")
    assert alone["model"] == "steps" and blend["weights"] == [3.0, 1.0]
    assert alone["n"] == blend["n"] == 40


def test_bad_records_exit_with_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"instruction": "q", "answer": "a", "label": 1}\n{"instruction": "q", "answer": "a"}\n')
    result = runner.invoke(app, ["crm", "train", "--data", str(bad), "--out", str(tmp_path / "m")])
    assert result.exit_code != 0
    assert "bad.jsonl:2: field 'label': missing" in result.output


def test_prm_kind_needs_a_base(synthetic: tuple[Path, Path], tmp_path: Path) -> None:
    data, _ = synthetic
    result = runner.invoke(app, ["crm", "train", "--data", str(data), "--out", str(tmp_path), "--kind", "prm"])
    assert result.exit_code != 0
    assert "--base" in result.output


def test_train_and_eval_on_replay_subset(shared_data: Path, tmp_path: Path) -> None:
    data = shared_data / "gsm8k-replay" / "gsm8k_replay_dev.jsonl"
    summary = _invoke(
        "train", "--data", str(data), "--out", str(tmp_path / "m"), "--limit-questions", "150", "--cv-folds", "0"
    )
    assert (summary["n"], summary["n_questions"]) == (300, 150)
    result = _invoke("eval", "--model", str(tmp_path / "m"), "--data", str(data), "--split", "last:100", "--json")
    assert result["n"] == 200 and result["selection"]["n_questions"] == 100
    assert set(result["auc_per_model"]) == {"gpt-4-1106-preview", "mistralai/Mixtral-8x7B-Instruct-v0.1"}
    # Even 150 training questions separate right from wrong within each model far above chance.
    assert result["auc_within_model_mean"] > 0.7


def test_unknown_model_spec_is_a_clean_error(synthetic: tuple[Path, Path]) -> None:
    data, _ = synthetic
    result = runner.invoke(app, ["crm", "eval", "--data", str(data), "--model", "nonsense-kind"])
    assert result.exit_code == 2
    assert "--model 'nonsense-kind'" in result.output


def test_prm_kind_trains_a_tiny_checkpoint_that_eval_loads(tmp_path: Path) -> None:
    from tests.tiny_models import save_tiny_prm

    base = save_tiny_prm(tmp_path / "base")
    data = write_records(tmp_path / "records.jsonl", synthetic_records(n_questions=4))
    summary = _invoke(
        "train", "--data", str(data), "--kind", "prm", "--base", str(base), "--out", str(tmp_path / "prm"),
        "--max-steps", "2", "--effective-batch", "4",
    )
    assert summary["kind"] == "prm" and summary["n"] == 8
    assert json.loads((tmp_path / "prm" / "prm_training.json").read_text())["steps"] == 2
    result = _invoke("eval", "--model", str(tmp_path / "prm"), "--data", str(data), "--json")
    assert result["n"] == 8 and 0.0 <= result["brier"] <= 1.0
