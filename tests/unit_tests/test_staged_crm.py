"""The staged CRM: groups shaped like the adaptive fine stage's, its fit and calibration on a synthetic staged
pass, the scorer's priors (model records, never per-role reputations), and the registry spec."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from reso.reward.base import ScoreItem
from reso.reward.labelled_records import LabelledRecord
from reso.reward.registry import build_scorer
from reso.reward.small_crm import SmallCRM, SmallCRMConfig, SmallCRMScorer
from reso.reward.staged_crm import StagedCRMScorer
from reso.reward.training.small_crm_fit import fit_small_crm
from reso.reward.training.staged_crm_fit import fit_staged_crm, staged_groups

QUICK = {"learning_rate": 0.1, "max_leaf_nodes": 7, "min_samples_leaf": 5, "l2_regularization": 1.0, "max_iter": 40}
# The order a staged pass asks in: two cheap models first, then the reliable one.
MODELS = (("hasty", 0.55), ("sloppy", 0.5), ("careful", 0.9))


def record(question_id: str, model: str = "m", label: int = 1) -> LabelledRecord:
    return LabelledRecord(f"question {question_id}", f"#### {label}", label, model=model, question_id=question_id)


def test_staged_groups_are_the_first_stage_then_each_escalation() -> None:
    # Subtasks interleave in a file (concurrent items); each keeps the order its answers were asked.
    records = [record("a"), record("b"), record("a"), record("c"), record("a"), record("b"), record("d"),
               record("d"), record("d"), record("d")]
    assert staged_groups(records, 2, 3) == [[0, 2], [0, 2, 4], [1, 5], [3], [6, 7], [6, 7, 8]]
    assert staged_groups(records, 1, 3) == [[0], [0, 2], [0, 2, 4], [1], [1, 5], [3], [6], [6, 7], [6, 7, 8]]
    assert staged_groups(records, 2, 2) == [[0, 2], [1, 5], [3], [6, 7]]
    with pytest.raises(ValueError, match="k <= k_max"):
        staged_groups(records, 3, 2)
    with pytest.raises(ValueError, match="1 <= k"):
        staged_groups(records, 0, 2)


def staged_pass(n_questions: int, seed: int) -> list[LabelledRecord]:
    """A synthetic staged pass: per question the three models in asking order; a wrong answer either
    states another number just as plainly as a right one does (only who wrote it, and who agrees, tell
    them apart) or stops before a final answer."""
    rng = random.Random(seed)
    records = []
    for q in range(n_questions):
        a, b = rng.randint(2, 60), rng.randint(2, 60)
        question = f"Tom has {a} apples and buys {b} more. How many apples does he have? (#{q})"
        for model, p_right in MODELS:
            if rng.random() < p_right:
                answer, label = f"He has {a + b} apples.\n#### {a + b}", 1
            elif rng.random() < 0.7:
                wrong = a + b + rng.randint(1, 3)
                answer, label = f"He has {wrong} apples.\n#### {wrong}", 0
            else:
                answer, label = f"He starts with {a} apples and then he buys", 0
            records.append(LabelledRecord(question, answer, label, model=model, question_id=f"q{q}/1"))
    return records


@pytest.fixture(scope="module")
def fitted() -> SmallCRM:
    config = SmallCRMConfig(answer_params=dict(QUICK), group_params=dict(QUICK), folds=3)
    return fit_staged_crm(staged_pass(150, seed=1), k=2, k_max=3, tune=False, config=config)


def score_groups(scorer, records: list[LabelledRecord], groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    values, labels = [], []
    for number, members in enumerate(groups):
        items = [ScoreItem(subtask=records[i].instruction, answer=records[i].answer, model=records[i].model,
                           group=f"g{number}") for i in members]
        values += scorer.score(items)
        labels += [records[i].label for i in members]
    return np.asarray(values), np.asarray(labels)


def test_scores_on_held_out_staged_groups_are_calibrated_probabilities(fitted: SmallCRM) -> None:
    held_out = staged_pass(80, seed=2)
    groups = staged_groups(held_out, 2, 3)
    assert {len(g) for g in groups} == {2, 3}
    scores, labels = score_groups(StagedCRMScorer(model=fitted), held_out, groups)
    assert ((scores >= 0) & (scores <= 1)).all()
    assert roc_auc_score(labels, scores) > 0.85
    # Calibrated: the mean score is the share right, overall and among answers scored above one half.
    assert abs(scores.mean() - labels.mean()) < 0.05
    confident = scores > 0.5
    assert abs(scores[confident].mean() - labels[confident].mean()) < 0.06
    # The model priors come from the staged records: the reliable model's share right is the highest.
    assert fitted.model_priors["careful"] > fitted.model_priors["hasty"] > 0.4


def test_the_scorer_reads_model_records_not_per_role_reputations(fitted: SmallCRM) -> None:
    # Bare final answers: the text says nothing, so only the prior tells the two apart.
    answers = ["#### 7", "#### 8"]

    def items(reputation: float | None) -> list[ScoreItem]:
        return [ScoreItem(subtask="Tom has 3 apples and buys 4 more. How many?", answer=text, model=model,
                          reputation=reputation, group="g") for text, model in zip(answers, ("careful", "hasty"))]

    staged, small = StagedCRMScorer(model=fitted), SmallCRMScorer(model=fitted)
    # A role never visited has reputation (0 + 1) / (0 + 1) = 1: the staged scorer ignores it.
    assert staged.score(items(1.0)) == staged.score(items(None))
    assert small.score(items(1.0)) != small.score(items(None))
    right, wrong = staged.score(items(None))
    assert right > wrong


def test_explicit_groups_must_hold_records() -> None:
    records = staged_pass(10, seed=3)
    config = SmallCRMConfig(answer_params=dict(QUICK), group_params=dict(QUICK), folds=2)
    with pytest.raises(ValueError, match="non-empty lists"):
        fit_small_crm(records, config, groups=[[0, 1], []])


def test_a_saved_staged_crm_is_a_scorer_spec(fitted: SmallCRM, tmp_path) -> None:
    fitted.save(tmp_path / "crm")
    scorer = build_scorer(f"staged:{tmp_path / 'crm'}")
    assert isinstance(scorer, StagedCRMScorer)
    item = ScoreItem(subtask="Tom has 3 apples and buys 4 more. How many?", answer="#### 7", model="careful")
    assert scorer.score([item]) == StagedCRMScorer(model=fitted).score([item])
    assert scorer.score_detailed([ScoreItem(subtask="q", answer="  ")])[0].reason == "empty answer"
