"""The consensus scorer: reputation-weighted agreement inside each group of candidates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reso.reward.base import ScoreItem
from reso.reward.consensus import ConsensusScorer


def _item(
    answer: str, group: str | None = "s1", reputation: float | None = None, subtask: str = "q"
) -> ScoreItem:
    return ScoreItem(subtask=subtask, answer=answer, group=group, reputation=reputation)


def test_unweighted_share_of_matching_answers() -> None:
    items = [_item("#### 18"), _item(r"\boxed{18.0}"), _item("The answer is 20."), _item("no idea")]
    scores = ConsensusScorer().score_detailed(items)
    assert [score.value for score in scores] == [0.5, 0.5, 0.25, 0.0]
    assert scores[3].reason == "no final answer found"


def test_reputation_weights_the_vote() -> None:
    items = [
        _item("#### 18", reputation=0.9),
        _item("#### 20", reputation=0.3),
        _item("#### 20", reputation=0.3),
    ]
    assert ConsensusScorer().score(items) == pytest.approx([0.6, 0.4, 0.4])


def test_zero_reputations_fall_back_to_equal_weights() -> None:
    items = [
        _item("#### 18", reputation=0.0),
        _item("#### 18", reputation=0.0),
        _item("#### 7", reputation=0.0),
    ]
    assert ConsensusScorer().score(items) == pytest.approx([2 / 3, 2 / 3, 1 / 3])


def test_groups_are_scored_separately_and_default_to_the_subtask_text() -> None:
    items = [
        _item("#### 18", group=None, subtask="a"),
        _item("#### 18", group="g"),
        _item("#### 18", group=None, subtask="a"),
        _item("#### 5", group="g"),
        _item("#### 9", group=None, subtask="b", reputation=0.7),
    ]
    scores = ConsensusScorer().score_detailed(items)
    assert [score.value for score in scores] == pytest.approx([1.0, 0.5, 1.0, 0.5, 0.7])
    assert scores[4].reason == "single candidate: its reputation"


def test_single_candidate_gets_its_prior() -> None:
    scorer = ConsensusScorer(lone_prior=0.4)
    [unknown] = scorer.score_detailed([_item("#### 3")])
    assert (unknown.value, unknown.reason) == (0.4, "single candidate: prior, reputation unknown")
    assert scorer.score([_item("#### 3", reputation=1.7)]) == [1.0]
    assert scorer.score([_item("", reputation=0.9)]) == [0.0]


def test_numeric_tolerance_decides_agreement() -> None:
    items = [_item("#### 100"), _item("#### 100.5")]
    assert ConsensusScorer().score(items) == [1.0, 1.0]
    assert ConsensusScorer(rel_tol=0.001).score(items) == [0.5, 0.5]


def test_bad_answers_do_not_raise() -> None:
    items = [_item(""), _item("   "), _item(r"\boxed{"), _item("nan"), _item("1e400"), _item("1e400")]
    scores = ConsensusScorer().score_detailed(items)
    assert [score.value for score in scores[:4]] == [0.0, 0.0, 0.0, 0.0]
    assert all(score.reason for score in scores[:4])
    assert all(0.0 <= score.value <= 1.0 for score in scores)


def test_recorded_answers_agreeing_across_models_are_mostly_right(shared_data: Path) -> None:
    path = shared_data / "gsm8k-replay" / "gsm8k_replay_dev.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:200] if line.strip()]
    items = [_item(text, group=row["id"]) for row in rows for text in row["responses"].values()]
    labels = [label for row in rows for label in row["correct"].values()]
    scores = ConsensusScorer().score(items)
    agreed = [label for label, score in zip(labels, scores, strict=True) if score == 1.0]
    split = [label for label, score in zip(labels, scores, strict=True) if score == 0.5]
    assert agreed and split
    assert sum(agreed) / len(agreed) > 0.95
    assert sum(split) / len(split) < 0.6
