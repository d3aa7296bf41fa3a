"""The calibrated CRM: Platt scaling of a base scorer with the model's record, fitted on labelled records."""

from __future__ import annotations

import pytest

from reso.reward.base import ScoreItem
from reso.reward.calibrated_crm import CalibratedScorer
from reso.reward.labelled_records import LabelledRecord
from reso.reward.training.calibration_fit import fit_calibration, training_groups


def records() -> list[LabelledRecord]:
    # A strong model (right 9 of 10) and a weak one (right 2 of 10) answer the same ten questions.
    out = []
    for q in range(10):
        out.append(LabelledRecord(instruction=f"q{q}", answer="The answer is 5.", label=int(q < 9),
                                  model="strong", question_id=f"q{q}"))
        out.append(LabelledRecord(instruction=f"q{q}", answer="The answer is 5.", label=int(q < 2),
                                  model="weak", question_id=f"q{q}"))
    return out


def test_training_groups_are_every_subset_of_a_subtask_with_its_models_record() -> None:
    items, labels = training_groups(records())
    assert len(items) == len(labels) == 10 * (1 + 1 + 2)  # two singles and one pair per question
    assert {item.record for item in items} == {(9.0, 10), (2.0, 10)}
    assert len({item.group for item in items}) == 30


def test_fit_raises_the_strong_models_score_above_the_weak_ones() -> None:
    # consensus scores both agreeing answers alike; only the model's record can tell them apart.
    scorer = fit_calibration("consensus", records())
    a, b, c = scorer.coefficients
    assert c > 0.5
    strong, weak = scorer.score_detailed([
        ScoreItem(subtask="q", answer="The answer is 5.", model="strong", group="g", record=(9.0, 10)),
        ScoreItem(subtask="q", answer="The answer is 5.", model="weak", group="g", record=(2.0, 10)),
    ])
    assert strong.value > 0.7 > 0.4 > weak.value


def test_saved_calibration_loads_with_its_base(tmp_path) -> None:
    scorer = CalibratedScorer(base_spec="consensus", coefficients=(0.5, 2.0, 0.0))
    scorer.save(tmp_path)
    loaded = CalibratedScorer(tmp_path)
    assert loaded.coefficients == (0.5, 2.0, 0.0) and loaded.base_spec == "consensus"
    item = ScoreItem(subtask="q", answer="", group="g")
    assert loaded.score_detailed([item])[0].value == 0.0  # a forced score (empty answer) passes through


def test_a_calibration_needs_a_base() -> None:
    with pytest.raises(ValueError, match="base scorer"):
        CalibratedScorer()
