"""`reso crm ablate`: every variant trained and tested on held-out questions, models and problem sets."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.reward.labelled_records import LabelledRecord, write_records
from reso.reward.training.crm_ablation import model_folds

runner = CliRunner()


def problem_set(prefix: str, n_questions: int, seed: int) -> list[LabelledRecord]:
    """Four models of different skill; wrong answers miscalculate (the step verifier sees it) or restate."""
    rng = random.Random(seed)
    records = []
    for q in range(n_questions):
        a, b = rng.randint(2, 90), rng.randint(2, 90)
        question = f"{prefix}: Ann has {a} coins and finds {b} more. How many coins does she have?"
        for model, p_right in (("m-good", 0.9), ("m-fair", 0.7), ("m-weak", 0.5), ("m-poor", 0.3)):
            if rng.random() < p_right:
                answer, label = f"She has {a} + {b} = {a + b} coins.\n#### {a + b}", 1
            elif rng.random() < 0.5:
                answer, label = f"She has {a} + {b} = {a + b + 2} coins.\n#### {a + b + 2}", 0
            else:
                answer, label = f"She found {b} coins, so the answer is {b}.", 0
            records.append(LabelledRecord(question, answer, label, model=model, question_id=f"{prefix}-{q}"))
    return records


def test_model_folds_are_stable_and_cover_every_model() -> None:
    records = problem_set("a", 3, 0)
    folds = model_folds(records, 2)
    assert set(folds) == {"m-good", "m-fair", "m-weak", "m-poor"} and set(folds.values()) <= {0, 1}
    assert model_folds(list(reversed(records)), 2) == folds


def test_ablate_reports_every_variant_on_each_held_out_axis(tmp_path: Path) -> None:
    first = write_records(tmp_path / "alpha.jsonl", problem_set("alpha", 30, 1))
    second = write_records(tmp_path / "beta.jsonl", problem_set("beta", 30, 2))
    result = runner.invoke(app, ["crm", "ablate", "--data", f"{first},{second}", "--variants", "default,no_group",
                                 "--draws", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["models"] == 4 and report["n_train"] + report["n_test"] == 240
    default, alone_only = report["variants"]["default"], report["variants"]["no_group"]
    assert set(default["problem_sets"]) == {"alpha->beta", "beta->alpha"}
    assert default["questions"]["alone_auc"] > 0.7  # the form of a wrong answer gives it away
    # Without the group model a score does not depend on the peers (only on whether the model is known).
    questions = alone_only["questions"]
    assert questions["peers_auc_within_model"] == pytest.approx(questions["alone_auc_within_model"], abs=0.05)
    assert 0.0 <= default["questions"]["pick3_crm"] <= 1.0 and 0.0 <= default["questions"]["pick3_vote"] <= 1.0
    low, high = default["questions"]["alone_auc_ci"]
    assert low <= default["questions"]["alone_auc"] <= high
    assert len(default["models"]["folds"]) in (1, 2)
    only = runner.invoke(app, ["crm", "ablate", "--data", f"{first},{second}", "--variants", "no_prior",
                               "--axes", "questions", "--draws", "1", "--json"])
    assert only.exit_code == 0, only.output
    assert set(json.loads(only.stdout.strip().splitlines()[-1])["variants"]["no_prior"]) == {"questions"}
    bad = runner.invoke(app, ["crm", "ablate", "--data", str(first), "--variants", "nonsense"])
    assert bad.exit_code == 2 and "unknown variant 'nonsense'" in bad.output
