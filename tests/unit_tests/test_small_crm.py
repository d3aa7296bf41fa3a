"""The learned small CRM: answer and peer features, fit, tuning, save/load round trip, the scorer."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from reso.reward.answer_features import SOLUTION_FEATURES, answer_key, read_solution, unwrap
from reso.reward.base import ScoreItem
from reso.reward.features import PEER_FEATURES, peer_features
from reso.reward.labelled_records import LabelledRecord
from reso.reward.registry import build_scorer
from reso.reward.small_crm import (
    SmallCRM,
    SmallCRMConfig,
    SmallCRMScorer,
    candidates_from_records,
    is_small_crm_dir,
)
from reso.reward.training.crm_search import ANSWER_GRID
from reso.reward.training.small_crm_fit import fit_small_crm, random_groups

QUICK = {"learning_rate": 0.1, "max_leaf_nodes": 7, "min_samples_leaf": 5, "l2_regularization": 1.0, "max_iter": 40}


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


def quick_config(**overrides: object) -> SmallCRMConfig:
    return SmallCRMConfig(answer_params=dict(QUICK), group_params=dict(QUICK), folds=3, **overrides)


def _features(question: str, answer: str) -> dict[str, float]:
    return dict(zip(SOLUTION_FEATURES, read_solution(question, answer).features))


def test_answer_features_read_form_truncation_hedging_and_steps() -> None:
    question = "Tom has 12 apples and buys 5 more. How many apples does he have?"
    good = _features(question, "He has 12 + 5 = 17 apples.\n#### 17")
    assert good["has_final"] == 1 and good["final_marked"] == 1 and good["final_integer"] == 1
    assert good["final_is_eq_result"] == 1 and good["final_is_last_eq_result"] == 1
    assert good["final_in_question"] == 0 and good["steps_wrong"] == 0 and good["steps_share"] == 1
    restated = _features(question, "12 + 5 = 17, so he bought 5 apples")
    assert restated["final_in_question"] == 1 and restated["final_is_eq_result"] == 0
    wrong = _features(question, "12 + 5 = 18. Wait, actually I think that is a mistake. Maybe \\boxed{18}")
    assert wrong["steps_wrong"] == 1 and wrong["revisions"] > 0 and wrong["hedges"] > 0
    torn = _features(question, "First we add the apples together and then we")
    assert torn["truncated"] == 1 and torn["has_final"] == 0
    torn_json = _features(question, '{"reasoning": "He has 12 + 5 = 17 apples and')
    assert torn_json["truncated"] == 1
    contradicts = _features(question, "The answer is 17.\nNo: the answer is 19.\n\\boxed{19}")
    assert contradicts["distinct_marked"] == 2


def test_json_wrapped_answers_are_unwrapped_even_when_not_valid_json() -> None:
    strict = '{"reasoning": "6 * 7 = 42", "answer": "42"}'
    assert unwrap(strict) == ("6 * 7 = 42", "42", False)
    latex = '```json\n{\n "reasoning": "We get $\\frac{1}{2}$.",\n "answer": "\\\\frac{1}{2}"\n}\n```'
    body, final, torn = unwrap(latex)
    assert body.strip().startswith("We get") and "answer" not in body and final == "\\frac{1}{2}" and not torn
    assert read_solution("q", latex).final == "\\frac{1}{2}"
    assert unwrap("no wrapper here") == ("no wrapper here", None, False)
    assert answer_key("1,000") == answer_key("1000.0") == "1000"
    assert answer_key("\\frac{1}{2}") == answer_key("0.5") and answer_key(None) is None


def test_peer_features_cluster_equal_answers_and_score_the_vote() -> None:
    question = "What is 6 times 7?"
    solutions = [read_solution(question, text) for text in ("6 * 7 = 42", "The answer is 42.", "6 * 7 = 43", "42")]
    rows = peer_features(solutions, ["a", "a", "a", "b"], np.array([1.0, 0.0, 0.5, 2.0]))
    named = [dict(zip(PEER_FEATURES, row)) for row in rows]
    assert named[0]["agree_share"] == 0.5 and named[0]["agree_any"] == 1 and named[0]["plurality"] == 1
    assert named[2]["agree_share"] == 0 and named[2]["final_in_peer_text"] == 0
    # Cluster {42, 42}: logits 1 + 0 plus one agreement bonus ln 5; the rival is the lone 43 at 0.5.
    assert named[0]["cluster_logit"] == pytest.approx(1.0 + np.log(5))
    assert named[0]["rival_logit"] == pytest.approx(0.5)
    total = 1 + np.exp(1 + np.log(5)) + np.exp(0.5)
    assert named[1]["vote_posterior"] == pytest.approx(np.exp(1 + np.log(5)) / total)
    assert named[3]["log_peers"] == 0 and named[3]["agree_share"] == 0.5
    assert named[3]["vote_posterior"] == pytest.approx(np.exp(2.0) / (1 + np.exp(2.0)))
    with pytest.raises(ValueError, match="3 group labels"):
        peer_features(solutions, ["a", "a", "a"], np.zeros(4))


def test_random_groups_cover_every_answer_once_per_repeat() -> None:
    questions = ["q1"] * 7 + ["q2"] * 3
    groups = random_groups(questions, (1, 2, 0), repeats=2, seed=0)
    flat = sorted(i for group in groups for i in group)
    assert flat == sorted(list(range(10)) * 2)
    assert all(len({questions[i] for i in group}) == 1 for group in groups)


@pytest.fixture(scope="module")
def fitted() -> SmallCRM:
    return fit_small_crm(synthetic_records(), quick_config())


def test_fit_learns_the_synthetic_rule(fitted: SmallCRM) -> None:
    test = synthetic_records(n_questions=30, seed=1)
    scores = fitted.predict_records(test)
    labels = np.array([r.label for r in test])
    assert scores.shape == (60,) and ((scores >= 0) & (scores <= 1)).all()
    assert scores[labels == 1].mean() > scores[labels == 0].mean() + 0.3
    assert fitted.model_priors["careful"] > fitted.model_priors["hasty"]
    # Alone, without peers or a known model, the answer's own form still separates right from wrong.
    lone = [LabelledRecord(r.instruction, r.answer, r.label, question_id=f"{i}") for i, r in enumerate(test)]
    alone = fitted.predict_records(lone)
    assert alone[labels == 1].mean() > alone[labels == 0].mean() + 0.2


def test_small_groups_score_as_scikit_learn_scores_the_same_answers_in_bulk(fitted: SmallCRM) -> None:
    # 60 answers to 30 questions in one call go to scikit-learn (more rows than SMALL_BATCH); the same
    # answers one question at a time go through the flattened trees: the same probabilities.
    test = synthetic_records(n_questions=40, seed=2)
    bulk = fitted.predict_records(test)
    assert len(test) > 64
    one_by_one = np.concatenate([fitted.predict_records(test[i:i + 2]) for i in range(0, len(test), 2)])
    np.testing.assert_allclose(one_by_one, bulk, rtol=0, atol=1e-9)


def test_tuning_picks_from_the_grid_and_records_every_candidate() -> None:
    crm = fit_small_crm(synthetic_records(n_questions=30), quick_config(), tune=True)
    table = crm.selection["answer_model"]
    assert len(table) == len(ANSWER_GRID) and crm.config.answer_params in ANSWER_GRID
    best = min(table, key=lambda row: row["log_loss"])
    assert best["params"] == crm.config.answer_params
    assert len(crm.selection["group_model"]) >= 2


def test_save_load_round_trip_gives_identical_scores(fitted: SmallCRM, tmp_path: Path) -> None:
    folder = fitted.save(tmp_path / "crm")
    assert is_small_crm_dir(folder)
    loaded = SmallCRM.load(folder)
    test = synthetic_records(n_questions=10, seed=2)
    assert loaded.predict_records(test).tolist() == fitted.predict_records(test).tolist()
    assert loaded.config == fitted.config and loaded.model_priors == fitted.model_priors
    meta = json.loads((folder / "small_crm.json").read_text())
    assert meta["feature_names"] == fitted.feature_names and meta["selection"]["answer_model"]


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


def test_reputation_overrides_the_model_prior_and_unseen_models_have_none(fitted: SmallCRM) -> None:
    candidates = candidates_from_records([LabelledRecord("q", "a", 1, model="hasty")])
    assert fitted.priors(candidates).tolist() == [[fitted.model_priors["hasty"], 1.0]]
    from reso.reward.features import Candidate

    assert fitted.priors([Candidate("q", "a", "g", model="hasty", reputation=0.9)]).tolist() == [[0.9, 1.0]]
    assert fitted.priors([Candidate("q", "a", "g", model="unseen")]).tolist() == [[fitted.base_rate, 0.0]]


def test_fit_and_load_errors(tmp_path: Path, fitted: SmallCRM) -> None:
    with pytest.raises(ValueError, match="no records"):
        fit_small_crm([])
    with pytest.raises(ValueError, match="need both 0 and 1"):
        fit_small_crm([LabelledRecord("q", "1", 1), LabelledRecord("r", "2", 1)])
    with pytest.raises(ValueError, match="at least two questions"):
        fit_small_crm([LabelledRecord("q", "1", 1), LabelledRecord("q", "2", 0)])
    with pytest.raises(FileNotFoundError, match="not a small CRM folder"):
        SmallCRM.load(tmp_path)
    with pytest.raises(RuntimeError, match="not fitted"):
        SmallCRM().predict_records([LabelledRecord("q", "1", 1)])
    folder = fitted.save(tmp_path / "old")
    meta = json.loads((folder / "small_crm.json").read_text())
    (folder / "small_crm.json").write_text(json.dumps({**meta, "format_version": 1}))
    with pytest.raises(ValueError, match="expected small/2, got small/1 .retrain"):
        SmallCRM.load(folder)


def test_embedding_views_add_one_stacked_column_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reso.reward import small_crm

    def fake_embed(texts: list[str]) -> np.ndarray:
        # A deterministic stand-in for MiniLM: the text's length and digit count, so the test stays fast.
        return np.array([[len(t) / 100, sum(ch.isdigit() for ch in t) / 10, 1.0] for t in texts])

    monkeypatch.setattr(small_crm, "embed_texts", fake_embed)
    records = synthetic_records(n_questions=20)
    crm = fit_small_crm(records, quick_config(question_embedding=True, answer_embedding=True))
    assert crm.answer_feature_names[-2:] == ["question_embedding_logit", "answer_embedding_logit"]
    assert set(crm.config.embedding_params) == {"question_embedding", "answer_embedding"}
    loaded = SmallCRM.load(crm.save(tmp_path / "crm"))
    assert loaded.predict_records(records[:6]).tolist() == pytest.approx(crm.predict_records(records[:6]).tolist())
