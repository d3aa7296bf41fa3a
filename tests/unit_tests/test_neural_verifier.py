"""The small neural verifier: input layout, learning a plain signal, save/load, and as the CRM's stacked view."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from reso.reward.neural_verifier import NeuralVerifier, NeuralVerifierConfig

TINY = {"hidden": 32, "layers": 1, "heads": 2, "max_length": 48, "question_tokens": 12, "batch_size": 16,
        "learning_rate": 3e-3, "threads": 1, "device": "cpu"}


def _pairs(n: int, seed: int) -> tuple[list[str], list[str], list[int]]:
    """Right answers end in a check mark word, wrong ones in a hedge: a signal a small encoder can learn."""
    rng = random.Random(seed)
    questions, answers, labels = [], [], []
    for i in range(n):
        label = rng.random() < 0.5
        filler = " ".join(rng.choice(["apples", "pears", "sum", "total", "add"]) for _ in range(rng.randint(3, 30)))
        questions.append(f"Question {i}: how many fruits are there in the basket?")
        answers.append(f"{filler}. The result is verified." if label else f"{filler}. Maybe it is wrong.")
        labels.append(int(label))
    return questions, answers, labels


def test_inputs_keep_the_question_start_and_the_answer_end() -> None:
    verifier = NeuralVerifier(NeuralVerifierConfig(**TINY))
    long_answer = "word " * 200 + "the final answer is 42"
    (row,) = verifier.encode(["What is six times seven? " * 10], [long_answer])
    tokens = verifier.tokenizer.convert_ids_to_tokens(row)
    assert len(row) == 48 and tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and tokens.count("[SEP]") == 2
    assert tokens[1:4] == ["what", "is", "six"] and tokens[-3:-1] == ["is", "42"]
    assert tokens.index("[SEP]") == 13  # the question took its 12 tokens at most


def test_learns_a_plain_signal_and_round_trips(tmp_path: Path) -> None:
    questions, answers, labels = _pairs(240, seed=0)
    verifier = NeuralVerifier(NeuralVerifierConfig(**TINY, epochs=4)).fit(questions, answers, labels)
    test_q, test_a, test_y = _pairs(80, seed=1)
    logits = verifier.decision_function(test_q, test_a)
    assert roc_auc_score(test_y, logits) > 0.9
    loaded = NeuralVerifier.load(verifier.save(tmp_path / "nv"))
    assert loaded.decision_function(test_q, test_a) == pytest.approx(logits, abs=1e-5)
    with pytest.raises(RuntimeError, match="not fitted"):
        NeuralVerifier(NeuralVerifierConfig(**TINY)).decision_function(["q"], ["a"])


def test_the_crm_stacks_the_verifier_out_of_fold_and_saves_it(tmp_path: Path) -> None:
    from reso.reward.small_crm import SmallCRM
    from reso.reward.training.small_crm_fit import fit_small_crm
    from tests.unit_tests.test_small_crm import quick_config, synthetic_records

    records = synthetic_records(n_questions=30)
    crm = fit_small_crm(records, quick_config(neural=True, neural_params={**TINY, "epochs": 1}))
    assert crm.answer_feature_names[-1] == "neural_logit" and len(crm._views["neural"].verifiers) == 2
    loaded = SmallCRM.load(crm.save(tmp_path / "crm"))
    scores = crm.predict_records(records[:8])
    assert np.allclose(loaded.predict_records(records[:8]), scores, atol=1e-6)


def test_cli_reads_neural_settings_with_their_types(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from reso.evals.cli import app
    from reso.reward.labelled_records import write_records
    from tests.unit_tests.test_small_crm import synthetic_records

    data = write_records(tmp_path / "r.jsonl", synthetic_records(n_questions=20))
    settings = [f"--neural-setting={key}={value}" for key, value in {**TINY, "max_train": "none"}.items()]
    result = CliRunner().invoke(app, ["crm", "train", "--data", str(data), "--out", str(tmp_path / "m"), "--no-tune",
                                      "--cv-folds", "3", "--neural", *settings])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "m" / "small_crm.json").read_text())
    from reso.reward.features import PEER_FEATURES

    assert meta["config"]["neural"] is True and meta["feature_names"][-1 - len(PEER_FEATURES)] == "neural_logit"
    assert meta["config"]["neural_params"]["hidden"] == 32 and meta["config"]["neural_params"]["max_train"] is None
    bad = CliRunner().invoke(app, ["crm", "train", "--data", str(data), "--out", str(tmp_path / "m2"),
                                   "--neural-setting", "hidden=wide"])
    assert bad.exit_code == 2 and "'wide' is not a int" in bad.output
