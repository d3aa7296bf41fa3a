"""The typed record between the coarse and the fine stage (`CandidateScore`, `RuleChoice`): the derived
quantities against hand-computed values, the run record's `selection` dict key for key as the coarse stage's
dict of components wrote it, and a candidate without a score read with the fallbacks it always had."""

from __future__ import annotations

import numpy as np
import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.pool import pool_from_dict
from reso.agents.selection.candidate_score import RECORD_FIELDS, CandidateScore, Rule, RuleChoice
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.scoring import BAYES_COMPONENTS, COMPONENTS, score_components
from reso.agents.selection.selector import Candidate, RandomSelector
from reso.graphs.asking import record_of
from reso.graphs.escalation import _price_in_record_points
from reso.graphs.priced_asking import _fitting, expected_price
from tests.selector_helpers import scored_terms, tiny_dadb, vector_selector


def _scored(variant: str, **config: float) -> dict[str, Candidate]:
    """Agents a (2 visits, right once, 0.02 USD a call) and b (1 visit, right, 0.001 USD), both free at list
    price, so each one's expected cost per call is its record's mean: a 0.04 / 3, b 0.001 / 2."""
    selector = vector_selector({"a": 0.0, "b": 0.0}, [[1, 0, 0], [0.6, 0.8, 0]], tiny_dadb(),
                               variant=variant, answer_value_usd=0.1, exploration_c=0.0, **config)
    return {c.agent.id: c for c in selector.select_vector(np.array([1.0, 0, 0]), 2)}


@pytest.mark.parametrize("variant", ["thompson", "normalized"])
def test_the_price_in_record_points_is_the_penalty_over_w_rep(variant: str) -> None:
    for w_rep in (2.0, 3.0):
        a = _scored(variant, w_rep=w_rep)["a"].terms
        assert a is not None and a.w_rep == w_rep
        assert a.cost_penalty == pytest.approx(w_rep * (0.04 / 3) / 0.1)
        # The penalty's w_rep cancels: the price of a call in units of the answer's value, 0.1333 of a record.
        assert a.price_in_record_points == pytest.approx((0.04 / 3) / 0.1)
        assert a.price_in_record_points == pytest.approx(a.cost_penalty / w_rep)


def test_a_score_without_a_reputation_weight_prices_nothing() -> None:
    assert scored_terms(cost_penalty=0.3, w_rep=0.0).price_in_record_points == 0.0


def test_the_record_is_the_one_the_score_read() -> None:
    scored = _scored("thompson")
    assert scored["a"].terms is not None and scored["a"].terms.record == (1.0, 2.0)
    assert scored["b"].terms is not None and scored["b"].terms.record == (1.0, 1.0)


@pytest.mark.parametrize("variant", ["thompson", "kl-ucb", "normalized"])
def test_the_reliability_asking_reads_is_the_record_with_a_prior_of_one_half(variant: str) -> None:
    # a: right once in 2 visits, (1 + 1) / (2 + 2); b: right in its one visit, (1 + 1) / (1 + 2). Read back
    # from the reputation as if it were the UCB mean (r + 1) / (n + 1), the Bayesian variants' posterior mean
    # (r + 1) / (n + 2) gave a 0.375.
    scored = _scored(variant)
    assert record_of(scored["a"]) == pytest.approx(0.5) and record_of(scored["b"]) == pytest.approx(2 / 3)


@pytest.mark.parametrize(("variant", "names"), [("thompson", BAYES_COMPONENTS), ("kl-ucb", BAYES_COMPONENTS),
                                                ("normalized", COMPONENTS), ("paper", COMPONENTS)])
def test_the_selection_record_has_the_old_keys_in_the_old_order(variant: str, names: tuple[str, ...]) -> None:
    for candidate in _scored(variant).values():
        assert list(candidate.selection_record()) == [*names, "pooled_visits"]
        assert all(type(value) is float for value in candidate.selection_record().values())


def test_the_selection_record_equals_the_dict_of_components_it_replaces() -> None:
    config = SelectorConfig(exploration_c=0.3)
    visits, rewards = np.array([3.0, 0.0, 7.0]), np.array([2.0, 0.0, 6.0])
    parts = score_components(np.array([0.9, 0.5, 0.2]), visits, rewards, np.array([0.01, 0.0, 0.02]),
                             np.full(3, 0.001), 10.0, config, np.random.default_rng(0), answer_value_usd=0.05)
    # What the selector adds: the agent's own visits, next to the pooled ones the score read.
    parts["pooled_visits"], parts["visits"] = parts["visits"], np.array([1.0, 0.0, 7.0])
    for i in range(3):
        old = {name: float(values[i]) for name, values in parts.items()}
        new = CandidateScore.of(parts, i, w_rep=config.w_rep, reward_sum=float(rewards[i])).as_record()
        assert list(new.items()) == list(old.items())


def test_a_term_the_score_adds_needs_a_field() -> None:
    parts = {name: np.zeros(1) for name in RECORD_FIELDS} | {"novelty": np.zeros(1)}
    with pytest.raises(TypeError, match="novelty"):
        CandidateScore.of(parts, 0, w_rep=2.0, reward_sum=0.0)


def _hand_built() -> Candidate:
    pool = pool_from_dict({"name": "by-hand", "agents": [
        {"id": "x", "model": {"spec": "fake:x", "price_in": 1.0, "price_out": 2.0}, "role": "Algebra",
         "profile": "Solves algebra."}]})
    return Candidate(pool.get("x"), 1.0)


def test_a_candidate_the_coarse_stage_did_not_score_reads_the_old_fallbacks() -> None:
    bare = _hand_built()
    pinned = Candidate(bare.agent, 1.0, rule=RuleChoice(Rule.PINNED))
    for candidate in (bare, pinned):
        assert candidate.terms is None
        assert record_of(candidate) == 0.5  # a record of nothing: the prior's one half
        assert _price_in_record_points(candidate) == 0.0 and expected_price(candidate) == 0.0
    # No gate: it fits, next to a scored candidate whose profile fits well.
    assert _fitting([Candidate(bare.agent, 1.0, scored_terms(gate=0.9)), bare]) == [0, 1]
    assert bare.selection_record() == {}


def test_a_rule_writes_its_name_as_the_record() -> None:
    agent = _hand_built().agent
    assert Candidate(agent, 1.0, rule=RuleChoice(Rule.PINNED)).selection_record() == {"pinned": 1.0}
    route = Candidate(agent, 1.0, rule=RuleChoice(Rule.INTEGRATION_ROUTE))
    assert route.selection_record() == {"integration_route": 1.0}
    drawn = RandomSelector(vector_selector({"a": 1.0, "b": 1.0, "c": 1.0}, np.eye(3)).pool, DADB(),
                           seed=0).select("a subtask", 3)
    assert [c.selection_record() for c in drawn] == [{"random_rank": 0.0}, {"random_rank": 1.0},
                                                     {"random_rank": 2.0}]
    assert all(c.terms is None and c.score == 0.0 for c in drawn)
