"""The learned small CRM: features, fit, save/load round trip, the scorer over ScoreItems."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from reso.reward.base import ScoreItem
from reso.reward.features import ANSWER_FEATURES, GROUP_FEATURES, Candidate, candidate_features
from reso.reward.records import LabelledRecord
from reso.reward.registry import build_scorer
from reso.reward.small_crm import (
    SmallCRM,
    SmallCRMConfig,
    SmallCRMScorer,
    candidates_from_records,
    is_small_crm_dir,
)

NAMES = list(ANSWER_FEATURES) + list(GROUP_FEATURES)


def synthetic_records(n_questions: int = 60, seed: int = 0) -> list[LabelledRecord]:
    """Two models per question: 'careful' is right 85 % of the time, 'hasty' 50 %; wrong answers either
    miscalculate or restate a number from the question."""
    rng = random.Random(seed)
    records = []
    for q in range(n_questions):
        a, b = rng.randint(2, 60), rng.randint(2, 60)
        question = f"Tom has {a} apples and buys {b} more. How many apples does he have?"
        for model, p_right in (("careful", 0.85), ("hasty", 0.5)):
            if rng.random() < p_right:
                answer, label = f"He has {a} + {b} = {a + b} apples.\n#### {a + b}", 1
            elif rng.random() < 0.5:
                answer, label = f"He has {a} + {b} = {a + b + 3} apples.\n#### {a + b + 3}", 0
            else:
                answer, label = f"He had {a} + {b} = {a + b} apples, so the answer is {b} apples.", 0
            records.append(LabelledRecord(question, answer, label, model=model, question_id=f"q{q}"))
    return records


def _row(candidates: list[Candidate], index: int) -> dict[str, float]:
    return dict(zip(NAMES, candidate_features(candidates)[index].tolist()))


def test_answer_features_read_form_and_steps() -> None:
    question = "Tom has 12 apples and buys 5 more. How many apples does he have?"
    good = _row([Candidate(question, "He has 12 + 5 = 17 apples.\n#### 17", "g")], 0)
    assert good["has_number"] == 1 and good["marked"] == 1
    assert good["final_is_eq_result"] == 1 and good["final_in_question"] == 0
    assert (good["steps"], good["steps_correct"], good["steps_wrong"]) == (1, 1, 0)
    restated = _row([Candidate(question, "12 + 5 = 17, so he bought 5 apples", "g")], 0)
    assert restated["final_in_question"] == 1 and restated["final_is_eq_result"] == 0
    wrong = _row([Candidate(question, "12 + 5 = 18\nQuestion: next one? 3", "g")], 0)
    assert wrong["steps_wrong"] == 1 and wrong["follow_on"] == 1
    empty = _row([Candidate(question, "", "g")], 0)
    assert empty["has_number"] == 0 and empty["agree_share"] == 0.5 and empty["n_peers"] == 0


def test_group_features_compare_peers_of_the_same_group_only() -> None:
    question = "What is 6 times 7?"
    candidates = [
        Candidate(question, "6 * 7 = 42", "a"),
        Candidate(question, "The answer is 42.", "a"),
        Candidate(question, "6 * 7 = 43, so 43", "a"),
        Candidate(question, "42", "b"),
    ]
    first, third, lone = _row(candidates, 0), _row(candidates, 2), _row(candidates, 3)
    assert first["n_peers"] == 2 and first["agree_share"] == 0.5 and first["agree_any"] == 1
    assert third["agree_share"] == 0 and third["final_in_peer_text"] == 0
    assert first["peer_final_in_text"] == 0.5  # 42 appears in its text, 43 does not
    assert lone["n_peers"] == 0


@pytest.fixture(scope="module")
def fitted() -> SmallCRM:
    return SmallCRM(SmallCRMConfig(max_iter=50)).fit(synthetic_records())


def test_fit_learns_the_synthetic_rule(fitted: SmallCRM) -> None:
    test = synthetic_records(n_questions=30, seed=1)
    scores = fitted.predict_records(test)
    labels = np.array([r.label for r in test])
    assert scores.shape == (60,) and ((scores >= 0) & (scores <= 1)).all()
    assert scores[labels == 1].mean() > scores[labels == 0].mean() + 0.3
    assert fitted.model_priors["careful"] > fitted.model_priors["hasty"]


def test_save_load_round_trip_gives_identical_scores(fitted: SmallCRM, tmp_path: Path) -> None:
    folder = fitted.save(tmp_path / "crm")
    assert is_small_crm_dir(folder)
    loaded = SmallCRM.load(folder)
    test = synthetic_records(n_questions=10, seed=2)
    assert loaded.predict_records(test).tolist() == fitted.predict_records(test).tolist()
    assert loaded.config == fitted.config and loaded.model_priors == fitted.model_priors


def test_scorer_groups_items_and_is_registered_as_small(fitted: SmallCRM, tmp_path: Path) -> None:
    folder = fitted.save(tmp_path / "crm")
    records = synthetic_records(n_questions=5, seed=4)
    items = [
        ScoreItem(subtask=r.instruction, answer=r.answer, model=r.model, group=r.question_id) for r in records
    ]
    scorer = build_scorer(f"small:{folder}")
    assert isinstance(scorer, SmallCRMScorer)
    assert scorer.score(items) == pytest.approx(fitted.predict_records(records).tolist())
    # Without a group, items of the same subtask are peers.
    ungrouped = [ScoreItem(subtask=i.subtask, answer=i.answer, model=i.model) for i in items]
    assert scorer.score(ungrouped) == pytest.approx(scorer.score(items))


def test_scorer_gives_zero_with_reason_to_empty_answers(fitted: SmallCRM) -> None:
    scorer = SmallCRMScorer(model=fitted)
    results = scorer.score_detailed(
        [ScoreItem(subtask="What is 1 + 1?", answer="  "), ScoreItem(subtask="What is 1 + 1?", answer="1 + 1 = 2")]
    )
    assert results[0].value == 0.0 and results[0].reason == "empty answer"
    assert 0.0 < results[1].value <= 1.0 and results[1].reason is None
    assert scorer.score_detailed([]) == []


def test_reputation_overrides_the_model_prior(fitted: SmallCRM) -> None:
    base = Candidate("q", "a", "g", model="hasty")
    assert fitted._prior(base) == fitted.model_priors["hasty"]
    assert fitted._prior(Candidate("q", "a", "g", model="hasty", reputation=0.9)) == 0.9
    assert fitted._prior(Candidate("q", "a", "g", model="unseen")) == fitted.base_rate


def test_fit_and_load_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no records"):
        SmallCRM().fit([])
    with pytest.raises(ValueError, match="need both 0 and 1"):
        SmallCRM().fit([LabelledRecord("q", "1", 1), LabelledRecord("r", "2", 1)])
    with pytest.raises(FileNotFoundError, match="not a small CRM folder"):
        SmallCRM.load(tmp_path)
    with pytest.raises(RuntimeError, match="not fitted"):
        SmallCRM().predict_records([LabelledRecord("q", "1", 1)])


def test_embeddings_add_minilm_columns_and_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESO_CACHE_DIR", str(tmp_path / "cache"))
    records = synthetic_records(n_questions=20)
    crm = SmallCRM(SmallCRMConfig(use_embeddings=True, classifier="logreg", calibration=None)).fit(records)
    assert len(crm.feature_names) == len(NAMES) + 2 + 384
    assert crm.features(candidates_from_records(records[:3])).shape == (3, len(crm.feature_names))
    loaded = SmallCRM.load(crm.save(tmp_path / "crm"))
    assert loaded.predict_records(records[:6]).tolist() == pytest.approx(crm.predict_records(records[:6]).tolist())
