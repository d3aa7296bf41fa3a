"""The reliability-weighted vote: posteriors from agents' training records and their agreement."""

from __future__ import annotations

import math

import pytest

from reso.reward.base import ScoreItem
from reso.reward.registry import build_scorer
from reso.reward.reliability_vote import ReliabilityVoteScorer, coincidence_rate, record_reliability


def _item(answer: str, record: tuple[float, int] | None, group: str = "g") -> ScoreItem:
    return ScoreItem(subtask="s", answer=answer, group=group, record=record)


def test_a_lone_answer_scores_its_agents_reliability():
    scorer = ReliabilityVoteScorer(0.2)
    [score] = scorer.score([_item("\\boxed{7}", (84, 98))])
    assert score == pytest.approx(record_reliability(84, 98)) and score == pytest.approx(0.85)
    assert scorer.score([_item("\\boxed{7}", None)]) == [pytest.approx(0.5)]


def test_one_strong_agent_outweighs_two_weak_ones_that_agree():
    scorer = ReliabilityVoteScorer(0.2)
    strong, weak1, weak2 = (84, 98), (49, 98), (43, 98)  # 0.85, 0.5, 0.44
    scores = scorer.score([_item("\\boxed{-89}", strong), _item("\\boxed{91}", weak1), _item("91", weak2)])
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    l_strong = logit(0.85)
    l_weak = logit(0.5) + logit(44 / 100) + math.log(5)
    norm = 1 + math.exp(l_strong) + math.exp(l_weak)
    assert scores[0] == pytest.approx(math.exp(l_strong) / norm)
    assert scores[1] == scores[2] == pytest.approx(math.exp(l_weak) / norm)
    assert scores[0] > scores[1]
    # Two strong agents agreeing make the answer near certain.
    agree = scorer.score([_item("\\boxed{3}", strong), _item("\\boxed{3.0}", strong)])
    assert agree[0] == agree[1] > 0.99


def test_groups_are_scored_apart_and_answers_without_a_value_get_zero():
    scorer = build_scorer("reliability:0.5")
    scores = scorer.score_detailed([_item("\\boxed{1}", (9, 10), "a"), _item("no idea", (9, 10), "a"),
                                    _item("\\boxed{2}", (0, 10), "b")])
    assert scores[0].value == pytest.approx(record_reliability(9, 10))
    assert scores[1].value == 0.0 and scores[1].reason == "no final answer found"
    assert scores[2].value == pytest.approx(record_reliability(0, 10))
    with pytest.raises(ValueError, match="coincidence"):
        ReliabilityVoteScorer(1.0)


def test_coincidence_rate_counts_equal_wrong_pairs():
    assert coincidence_rate([["1", "1", "2"], ["5"]]) == pytest.approx(1 / 3)
    assert coincidence_rate([["1"], []]) is None


def test_two_roles_of_one_model_count_as_one_vote():
    scorer = ReliabilityVoteScorer(0.2)
    one = ScoreItem(subtask="s", answer="\\boxed{4}", group="g", model="m", record=(9, 18))
    twice = scorer.score([one, ScoreItem(subtask="s", answer="4", group="g", model="m", record=(9, 18))])
    assert twice == [pytest.approx(scorer.score([one])[0])] * 2
