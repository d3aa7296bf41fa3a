"""Asking that pays for itself (`reso.graphs.priced_asking`): the first pick looking one check ahead, and one
more candidate only while its expected gain in being right × the value of a right answer exceeds its price,
against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reso.agents.pool import pool_from_dict
from reso.agents.selection.selector import Candidate
from reso.graphs.asking import Asked
from reso.graphs.asking_config import DEFAULT_K_MAX
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.dag import StepRole, TaskDAG
from reso.graphs.escalation import Adaptive, AskingConfig, AskingRule, FixedK, policy_for
from reso.graphs.priced_asking import PricedAsking
from reso.graphs.run import DagRun
from reso.graphs.run_records import CandidateRecord, StepRecord
from reso.graphs.settings import ReSoSettings
from reso.graphs.subtask import MIN_VALUE_USD, Subtask
from reso.reward.peer_errors import PairCounts, PeerErrors
from tests.selector_helpers import scored_terms


def _cand(model: str, price: float, role: str = "Algebra") -> Candidate:
    """A candidate of `model` whose expected cost per call (the coarse stage's `mean_cost`) is `price`."""
    pool = pool_from_dict({"name": "priced", "agents": [
        {"id": f"{model}/{role}", "model": {"spec": f"fake:{model}", "price_in": 1.0, "price_out": 2.0},
         "role": role, "profile": "Solves algebra."}]})
    return Candidate(pool.get(f"{model}/{role}"), 1.0, scored_terms(mean_cost=price))


CHEAP, STRONG = _cand("cheap", 0.0008), _cand("strong", 0.003)
RECORDS = [0.5, 0.9]  # how often each was right in training


def _records(*values: float):
    return lambda: list(values)


def test_a_doubtful_answer_is_checked_only_when_the_gain_times_the_value_beats_the_price():
    # After the cheap model's answer scored 0.6, the strong one agrees (0.54 + 0.4 × 0.1 × 0.2 of the time,
    # the cheap answer then right 0.54 / 0.548 of the time) or disagrees, and its answer is then kept (right
    # 0.4 × 0.9 of the time, against 0.6 × 0.1 for the cheap one): 0.54 + 0.36 = 0.9 against 0.6 for stopping,
    # a gain of 0.3 of a right answer.
    doubtful = [Asked(0, "4", 0.6)]
    pays = 0.003 / 0.3
    assert PricedAsking(answer_value_usd=pays * 1.01).more([CHEAP, STRONG], doubtful, _records(*RECORDS)) == [1]
    assert PricedAsking(answer_value_usd=pays * 0.99).more([CHEAP, STRONG], doubtful, _records(*RECORDS)) == []
    # A confident answer is never checked, a failed one (no value) always is when the value covers the price.
    assert PricedAsking(answer_value_usd=1.0).more([CHEAP, STRONG], [Asked(0, "4", 1.0)], _records(*RECORDS)) == []
    assert PricedAsking(answer_value_usd=0.01).more([CHEAP, STRONG], [Asked(0, None, None)],
                                                     _records(*RECORDS)) == [1]


def test_asking_stops_at_k_max_and_never_asks_a_model_twice():
    other_role = _cand("cheap", 0.0008, role="Geometry")
    policy = PricedAsking(answer_value_usd=1.0, k_max=2)
    assert policy.more([CHEAP, other_role, STRONG], [Asked(0, "4", 0.2)], _records(0.5, 0.5, 0.9)) == [2]
    assert policy.more([CHEAP, STRONG], [Asked(0, "4", 0.2), Asked(1, "5", 0.3)], _records(*RECORDS)) == []
    assert policy.more([CHEAP, other_role], [Asked(0, "4", 0.2)], _records(0.5, 0.5)) == []


def test_a_live_model_whose_call_gave_nothing_is_tried_again_in_another_role_a_recording_is_not():
    policy = PricedAsking(answer_value_usd=1.0)
    live, live_again = _cand("local", 0.0), _cand("local", 0.0, role="Geometry")
    assert policy.more([live, live_again], [Asked(0, None, None)], _records(0.5, 0.5)) == [1]
    assert policy.more([live, live_again], [Asked(0, "4", 0.2)], _records(0.5, 0.5)) == []  # not a check
    assert policy.more([live, live_again], [Asked(0, None, None), Asked(1, None, None)], _records(0.5, 0.5)) == []
    pool = pool_from_dict({"name": "replayed", "agents": [
        {"id": f"m/{role}", "model": {"spec": "replay:answers.jsonl#m", "price_in": 1.0, "price_out": 2.0},
         "role": role, "profile": "Solves algebra."}
        for role in ("Algebra", "Geometry")]})
    recorded = [Candidate(pool.get(f"m/{role}"), 1.0, scored_terms(mean_cost=0.0)) for role in ("Algebra", "Geometry")]
    # A recording gives the same answer, or the same missing one, in every role.
    assert policy.more(recorded, [Asked(0, None, None)], _records(0.5, 0.5)) == []
    assert Adaptive(confidence=0.9, k_max=3).more(recorded, [Asked(0, None, None)], _records(0.5, 0.5)) == []
    assert Adaptive(confidence=0.9, k_max=3).more([live, live_again], [Asked(0, None, None)],
                                                  _records(0.5, 0.5)) == [1]


def test_the_check_is_read_where_the_first_model_was_wrong_from_how_their_mistakes_go_together():
    # In training the strong model was wrong on 6 of the 10 questions the cheap one got wrong (of 20 shared).
    errors = PeerErrors({PeerErrors.pair_key("cheap", "strong"): PairCounts(both=20, wrong_a=10, wrong_b=6,
                                                                               wrong_together=6)})
    right_where_wrong = 1 - (6 + 5 * (1 - 0.9)) / (10 + 5)  # shrunk towards its record with 5 pseudo-questions
    assert errors.right_given_wrong("cheap", "strong", 0.9) == pytest.approx(right_where_wrong)
    assert errors.right_given_wrong("cheap", "unknown", 0.9) == 0.9
    gain = 0.4 * right_where_wrong - 0.6 * (1 - 0.9)
    policy = PricedAsking(answer_value_usd=0.003 / gain * 1.01, errors=errors)
    assert policy.more([CHEAP, STRONG], [Asked(0, "4", 0.6)], _records(*RECORDS)) == [1]
    assert PricedAsking(answer_value_usd=0.003 / gain * 0.99, errors=errors).more(
        [CHEAP, STRONG], [Asked(0, "4", 0.6)], _records(*RECORDS)) == []


def _step(p: float, q: float, w: float, price: float, s: float, coincide: float = 0.2) -> float:
    """Asking a candidate (right q of the time, w where the best answer's model was wrong) and stopping, by
    the formula of the module docstring (units of the value)."""
    agree = p * q + (1 - p) * (1 - w) * coincide
    kept, other = p * (1 - q) / (1 - agree), (1 - p) * w / (1 - agree)
    return -price + p * q + (1 - agree) * (max(kept, other) + s * min(kept, other))


def _planned(q: float, price: float, checks: list[tuple[float, float]], s: float) -> float:
    """What asking a candidate first is worth, its best next step included (checks: (record, price))."""
    def then(p: float) -> float:
        return max([p, *(_step(p, right, right, cost, s) for right, cost in checks)])
    return -price + q * then(q + s * (1 - q)) + (1 - q) * then(q * (1 - s))


def test_the_first_pick_plans_one_check_ahead_by_the_scorers_discrimination():
    value = 0.01  # prices in units of it: the cheap model 0.08, the strong one 0.3
    cheap_first = _planned(0.5, 0.08, [(0.9, 0.3)], s=0.8)
    strong_first = _planned(0.9, 0.3, [(0.5, 0.08)], s=0.8)
    assert cheap_first > strong_first  # 0.674 against 0.631: the cheap answer, checked when doubtful, wins
    policy = PricedAsking(answer_value_usd=value, discrimination=0.8)
    assert policy.first([STRONG, CHEAP], 2, _records(0.9, 0.5)) == [1]
    assert policy.plan([STRONG, CHEAP], [0.9, 0.5]).first(1, np.ones(2, dtype=bool)) == pytest.approx(cheap_first)
    # A scorer that cannot tell right from wrong leaves nothing to react to: the strong model goes first.
    blind = PricedAsking(answer_value_usd=value, discrimination=0.0)
    assert _planned(0.5, 0.08, [(0.9, 0.3)], s=0.0) < _planned(0.9, 0.3, [(0.5, 0.08)], s=0.0)
    assert blind.first([STRONG, CHEAP], 2, _records(0.9, 0.5)) == [0]
    # At a low value the strong model does not pay even as a check: the cheap one answers alone.
    assert PricedAsking(answer_value_usd=0.001, discrimination=0.8).first([STRONG, CHEAP], 2,
                                                                           _records(0.9, 0.5)) == [1]


def test_a_cheap_peers_agreement_is_worth_asking_for_before_the_dear_model():
    # Two cheap peers right half the time at 0.08 of the value, a dear model right 0.9 of the time at 0.4.
    # After the first peer's 0.5, the dear model now is worth no more than stopping (0.5); the second peer
    # agrees 0.25 + 0.5 × 0.5 × 0.2 = 0.3 of the time (the answer then right 0.25 / 0.3 of the time: stop)
    # and otherwise sends the subtask on to the dear model, which then pays.
    peer, dear = _cand("peer", 0.0008), _cand("strong", 0.004)
    policy = PricedAsking(answer_value_usd=0.01)
    agree = 0.25 + 0.5 * 0.5 * 0.2
    disagree_best = 0.25 / (1 - agree)  # the two disagreeing answers are each right 0.25 / 0.7 of the time
    then_dear = _step(disagree_best, 0.9, 0.9, 0.4, 0.0)
    assert then_dear > disagree_best
    via_peer = -0.08 + agree * (0.25 / agree) + (1 - agree) * then_dear
    direct = _step(0.5, 0.9, 0.9, 0.4, 0.0)  # nothing pays after the dear model
    assert via_peer > 0.5 >= direct - 1e-12
    plan = policy.plan([CHEAP, peer, dear], [0.5, 0.5, 0.9])
    assert plan.ask(0.5, plan.given_wrong[0], 0, np.array([False, True, True]), depth=2)[1] == pytest.approx(via_peer)
    assert policy.more([CHEAP, peer, dear], [Asked(0, "4", 0.5)], _records(0.5, 0.5, 0.9)) == [1]
    # Without room for the dear model after it, the peer is not worth asking either.
    assert PricedAsking(answer_value_usd=0.01, k_max=2).more([CHEAP, peer, dear], [Asked(0, "4", 0.5)],
                                                             _records(0.5, 0.5, 0.9)) == []


def test_an_infinite_value_asks_by_chance_of_being_right_alone():
    assert PricedAsking(answer_value_usd=math.inf, k_max=1).first([CHEAP, STRONG], 2, _records(*RECORDS)) == [1]
    # A weaker model's disagreement would not overturn a strong answer: asking it gains nothing, even for free.
    assert PricedAsking(answer_value_usd=math.inf).more([CHEAP, STRONG], [Asked(1, "4", 0.6)],
                                                        _records(*RECORDS)) == []


def test_policy_for_builds_the_rule_the_settings_name():
    priced = policy_for(AskingConfig(rule=AskingRule.PRICED, k=2), answer_value_usd=0.02, discrimination=0.3)
    assert priced == PricedAsking(answer_value_usd=0.02, k_max=DEFAULT_K_MAX, discrimination=0.3)
    assert priced.slate_size(2) == 16 and priced.first([], 2) == []
    assert policy_for(AskingConfig(rule="fixed", k=2)) == FixedK()
    with pytest.raises(ValueError, match="needs both asking.confidence and asking.k_max"):
        AskingConfig(rule="confidence", k=2, k_max=3)
    with pytest.raises(ValueError, match="unknown asking.rule 'sometimes'"):
        AskingConfig(rule="sometimes", k=2)
    for bad in ({"answer_value_usd": 0.0}, {"answer_value_usd": 1.0, "k_max": 0},
                {"answer_value_usd": 1.0, "discrimination": 1.5}):
        with pytest.raises(ValueError):
            PricedAsking(**bad)


def test_a_candidate_whose_profile_hardly_fits_the_subtask_is_not_asked():
    # A free exact tool offered for a word problem: its similarity gate is a tenth of the LLMs'.
    tool = Candidate(_cand("calculator", 0.0).agent, 1.0, scored_terms(mean_cost=0.0, gate=0.08))
    cheap = Candidate(CHEAP.agent, 1.0, scored_terms(mean_cost=0.0008, gate=0.8))
    strong = Candidate(STRONG.agent, 1.0, scored_terms(mean_cost=0.003, gate=0.7))
    policy = PricedAsking(answer_value_usd=0.01)
    assert policy.first([tool, cheap, strong], 2, _records(0.5, 0.5, 0.9)) == [2]
    assert policy.more([tool, cheap, strong], [Asked(2, None, None)], _records(0.5, 0.5, 0.9)) == [1]


def _record(step: str, value: str | None, score: float | None) -> StepRecord:
    candidates = [CandidateRecord(agent_id="m", model="fake:m", role="Algebra", answer="", value=value, score=score,
                                  score_reason=None, reward=None, domain=None, selection={}, input_tokens=0,
                                  output_tokens=0, cost_usd=0.0, latency_s=0.0)]
    return StepRecord(id=step, instruction=step, agent="m" if value is not None else None, value=value,
                      candidates=candidates)


def test_a_steps_answer_is_worth_the_questions_value_times_the_chance_its_ancestors_are_right():
    dag = TaskDAG.from_steps([{"id": "a", "instruction": "a"}, {"id": "b", "instruction": "b"},
                              {"id": "c", "instruction": "c", "depends_on": ["a"]},
                              {"id": "d", "instruction": "d", "depends_on": ["c", "b"]},
                              {"id": "final", "instruction": "a*b*d", "depends_on": ["a", "b", "d"]}])
    run = DagRun(RunContext(settings=ReSoSettings()), dag, budget=Budget())
    done = {"a": _record("a", "4", 0.8), "b": _record("b", "5", 0.5)}
    # An unrelated branch (b) does not count, however it went or whether it finished first.
    assert run.standing("c", done) == pytest.approx(0.8)
    assert run.standing("c", {"a": done["a"]}) == pytest.approx(0.8)
    assert run.standing("a", done) == 1.0  # its own answer does not count, nor do later steps
    assert run.standing("d", {**done, "c": _record("c", "2", 0.5)}) == pytest.approx(0.8 * 0.5 * 0.5)
    assert run.standing("c", {"a": _record("a", None, None)}) == 0.0  # a failed ancestor loses the question
    assert run.subtask("c", done).standing == pytest.approx(0.8)


def test_a_steps_answer_value_is_floored_and_an_infinite_question_stays_infinite():
    assert Subtask(id="c", instruction="c", role=StepRole.SUB_QUESTION, standing=0.0).answer_value(math.inf) == math.inf
    assert Subtask(id="c", instruction="c", role=StepRole.SUB_QUESTION, standing=0.0).answer_value(1.0) == MIN_VALUE_USD
    assert Subtask(id="c", instruction="c", role=StepRole.SUB_QUESTION, standing=0.5).answer_value(1.0) == pytest.approx(0.5)
