"""`reso crm train` and `reso crm eval` end to end through the typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.reward.labelled_records import load_records, write_records
from reso.reward.small_crm import SmallCRM
from tests.unit_tests.test_small_crm import synthetic_records

runner = CliRunner()
KEYS = {"auc", "accuracy", "brier", "n", "auc_per_model", "auc_within_model_mean", "selection", "processbench_f1",
        "intervals"}
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "crm"


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
    assert (summary["n"], summary["n_questions"], summary["n_models"]) == (120, 60, 2)
    # Tuned by default: every stage reports the cross-validated figures of the setting it chose.
    chosen = summary["cross_validation"]["answer_model"]
    assert chosen["params"] == summary["settings"]["answer_model"] and chosen["candidates"] == 4
    assert 0.5 < chosen["auc"] <= 1.0 and summary["cross_validation"]["group_model"]["candidates"] == 2
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
    assert result["processbench_f1"] is None  # the small CRM does not score steps
    low, high = result["intervals"]["auc"]
    assert low <= result["auc"] <= high and result["intervals"]["auc_within_model_mean"] is not None


def test_candidates_compare_the_pick_with_vote_fixed_model_and_oracle(synthetic: tuple[Path, Path]) -> None:
    data, model = synthetic
    result = _invoke("eval", "--model", str(model), "--data", str(data), "--split", "last:20", "--json",
                     "--candidates", "2", "--draws", "3")
    picks = result["candidates"]
    test = [r for r in load_records(data) if int(r.question_id[1:]) >= 60]
    by_question: dict[str, dict[str, int]] = {}
    for record in test:
        by_question.setdefault(record.question_id, {})[record.model] = record.label
    # Two answers per question: every slate is the whole question, so the oracle and the best fixed model
    # (careful, the better one on the CRM's training questions) are exact.
    assert (picks["k"], picks["slates"], picks["n_questions"]) == (2, 60, 20)
    assert picks["oracle"] == pytest.approx(sum(max(v.values()) for v in by_question.values()) / 20)
    assert picks["best_fixed"] == pytest.approx(sum(v["careful"] for v in by_question.values()) / 20)
    assert picks["best_fixed_from"] == "the CRM's training records"
    assert picks["crm_minus_vote"] == pytest.approx(picks["crm"] - picks["vote"])
    assert picks["crm"] >= picks["best_fixed"] - 0.05
    low, high = picks["intervals"]["crm"]
    assert low <= picks["crm"] <= high
    too_many = runner.invoke(app, ["crm", "eval", "--model", str(model), "--data", str(data), "--candidates", "3"])
    assert too_many.exit_code == 2 and "no question has 3 recorded answers" in too_many.output


def test_step_labelled_records_give_processbench_f1_for_step_scorers(synthetic: tuple[Path, Path]) -> None:
    _, model = synthetic
    data = FIXTURES / "processbench_tiny.jsonl"
    steps = _invoke("eval", "--model", "steps", "--data", str(data), "--json", "--bootstrap", "0")
    # The verifier finds the two miscalculated steps and misses the misread question (see the fixture).
    assert steps["processbench"] == {"n_with_error": 3, "n_without_error": 3, "error_accuracy": pytest.approx(2 / 3),
                                     "correct_accuracy": 1.0, "f1": pytest.approx(0.8)}
    assert steps["processbench_f1"] == pytest.approx(0.8) and steps["n"] == 6
    crm = _invoke("eval", "--model", str(model), "--data", str(data), "--json", "--bootstrap", "0")
    assert crm["processbench_f1"] is None and crm["auc"] is not None
    assert set(crm["auc_per_model"]) == {"Qwen2-7B-Instruct", "Meta-Llama-3-8B-Instruct", "Qwen2.5-Math-7B-Instruct"}


def test_several_files_and_a_hash_split(synthetic: tuple[Path, Path], tmp_path: Path) -> None:
    data, model = synthetic
    steps = FIXTURES / "processbench_tiny.jsonl"
    both = _invoke("eval", "--model", str(model), "--data", f"{data},{steps}", "--json", "--bootstrap", "0")
    assert both["n"] == 160 + 6
    test = _invoke("eval", "--model", str(model), "--data", str(data), "--split", "test", "--json", "--bootstrap", "0")
    train = _invoke("eval", "--model", str(model), "--data", str(data), "--split", "train", "--json",
                    "--bootstrap", "0")
    assert test["n"] + train["n"] == 160 and 0 < test["n"] < train["n"]


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
        "train", "--data", str(data), "--out", str(tmp_path / "m"), "--limit-questions", "150", "--no-tune"
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


def test_a_failing_scorer_is_counted_and_an_error_when_it_always_fails(
    synthetic: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from reso.reward.small_crm import SmallCRM

    data, model = synthetic
    original = SmallCRM.predict_candidates

    def sometimes(self, candidates):  # type: ignore[no-untyped-def]
        values = original(self, candidates)
        values[:10] = float("nan")  # the scorer marks a non-finite value as a failure
        return values

    monkeypatch.setattr(SmallCRM, "predict_candidates", sometimes)
    result = _invoke("eval", "--model", str(model), "--data", str(data), "--json", "--bootstrap", "0")
    # Never silently scored: counted, and left out of the figures.
    assert (result["scorer_failures"], result["n"]) == (10, 150)

    def always(self, candidates):  # type: ignore[no-untyped-def]
        raise RuntimeError("out of memory")

    monkeypatch.setattr(SmallCRM, "predict_candidates", always)
    failed = runner.invoke(app, ["crm", "eval", "--model", str(model), "--data", str(data), "--json"])
    assert failed.exit_code == 1
    assert "error: small failed on all 160 answers: scorer failed: small CRM: RuntimeError: out of memory" in failed.output


def test_alone_scores_every_answer_without_its_peers(synthetic: tuple[Path, Path]) -> None:
    from reso.reward.features import Candidate
    from reso.reward.small_crm import candidates_from_records

    data, model = synthetic
    result = _invoke("eval", "--model", str(model), "--data", str(data), "--split", "last:20", "--json",
                     "--bootstrap", "0", "--alone")
    test = [r for r in load_records(data) if int(r.question_id[1:]) >= 60]
    crm = SmallCRM.load(model)
    lone = [Candidate(c.question, c.answer, f"{i}", model=c.model) for i, c in enumerate(candidates_from_records(test))]
    scores = crm.predict_candidates(lone)
    assert result["alone"] is True
    assert result["auc"] == pytest.approx(roc_auc_score([r.label for r in test], scores))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"problem": "q", "steps": ["a", "b"], "label": 5}\n',
         "pb.jsonl:1: field 'label': expected -1 (no wrong step) or a step index below 2, got 5"),
        ('{"instruction": "q", "steps": "one step"}\n', "pb.jsonl:1: field 'steps': expected a non-empty list of step texts"),
    ],
)
def test_bad_step_records_are_one_line_with_exit_code_2(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "pb.jsonl"
    bad.write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["crm", "eval", "--data", str(bad), "--model", "steps"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {bad.parent}/{message}"]
