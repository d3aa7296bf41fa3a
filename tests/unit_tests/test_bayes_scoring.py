"""Thompson sampling (the default coarse-stage score) and KL-UCB: posteriors, bounds and components against
hand-computed values, cost and similarity terms, deterministic exploitation and seeded reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.posterior import bernoulli_kl, beta_posterior, kl_upper_bound, thompson_belief
from reso.agents.selection.scoring import BAYES_COMPONENTS, COMPONENTS, score_components
from reso.agents.selection.selector import ReputationSelector
from reso.graphs.settings import ReSoSettings
from tests.selector_helpers import HASH, priced_pool, sigmoid, tiny_dadb, vector_selector


def _by_id(selector: ReputationSelector, query, k: int) -> dict[str, dict[str, float]]:
    return {c.agent.id: c.selection_record()
            for c in selector.select_vector(np.asarray(query, dtype=np.float64), k)}


@pytest.fixture
def tiny_db() -> DADB:
    return tiny_dadb()


def test_defaults_are_thompson_in_the_selector_and_the_settings() -> None:
    assert SelectorConfig().variant == "thompson" and ReSoSettings().selection.variant == "thompson"


def test_beta_posterior_takes_fractional_rewards() -> None:
    alpha, beta = beta_posterior(np.array([0, 4, 4]), np.array([0.0, 2.5, 4.0]))
    assert alpha.tolist() == [1.0, 3.5, 5.0] and beta.tolist() == [1.0, 2.5, 1.0]


@pytest.mark.parametrize("variant", ["thompson", "kl-ucb"])
@pytest.mark.parametrize("exploration_c", [None, 0.0])
def test_posterior_mean_is_half_before_any_visit_and_the_belief_is_optimistic(variant, exploration_c) -> None:
    parts = _by_id(vector_selector({"a": 1.0, "b": 1.0}, [[1, 0], [1, 0]], variant=variant,
                                   exploration_c=exploration_c), [1.0, 0], 2)
    for row in parts.values():
        assert row["visits"] == 0 and row["posterior_mean"] == 0.5 and row["reputation"] == 0.5
        # An agent never tried is believed perfect, as UCB's smoothed mean (1 at n = 0) has it.
        assert row["belief"] == 1.0 and row["exploration"] == pytest.approx(2.0 * (1.0 - 0.5) / 2)


@pytest.mark.parametrize("variant", ["thompson", "kl-ucb"])
def test_unvisited_agent_is_tried_before_a_good_known_one_and_exploiting_ranks_by_posterior_mean(variant) -> None:
    db = DADB()
    for i in range(20):  # at list price: 1,000 tokens in, 500 out
        db.record("known", 1.0 if i < 18 else 0.0, 0.002, 1500)
        db.record("weaker", 1.0 if i < 15 else 0.0, 0.002, 1500)
    prices = {"known": 1.0, "weaker": 1.0, "new": 1.0}
    vectors = [[1, 0], [1, 0], [1, 0]]
    learning = vector_selector(prices, vectors, db, variant=variant)
    assert learning.select_vector(np.array([1.0, 0]), 3)[0].agent.id == "new"
    frozen = vector_selector(prices, vectors, db, variant=variant, exploration_c=0.0)
    ranked = frozen.select_vector(np.array([1.0, 0]), 3)
    assert [c.agent.id for c in ranked] == ["new", "known", "weaker"]
    assert ranked[1].terms.belief == ranked[1].terms.posterior_mean == pytest.approx(19 / 22)
    assert ranked[2].terms.belief == pytest.approx(16 / 22)


def test_a_fresh_dadb_still_asks_the_best_matching_agents_of_different_models() -> None:
    # With every mean at the prior's 0.5, the price would decide alone; the optimistic belief keeps the
    # similar dear agent ahead of a cheap one whose profile does not match.
    vectors = [[0.4, math.sqrt(1 - 0.4**2)], [0.25, math.sqrt(1 - 0.25**2)]]  # cosines 0.4 and 0.25
    parts = _by_id(vector_selector({"dear": 10.0, "cheap": 0.0}, vectors, exploration_c=0.0,
                                   answer_value_usd=0.04),  # the dear call's 0.02 pays w_rep × 0.5
                   [1.0, 0], 2)
    assert parts["dear"]["cost_penalty"] == 1.0 and parts["cheap"]["cost_penalty"] == 0.0
    assert parts["dear"]["score"] > parts["cheap"]["score"]


def test_posterior_mean_and_kl_bound_grow_with_reward_and_the_bound_tightens_with_visits() -> None:
    n = np.full(11, 10.0)
    rewards = np.arange(11, dtype=np.float64)
    alpha, beta = beta_posterior(n, rewards)
    mean = alpha / (alpha + beta)
    assert np.all(np.diff(mean) > 0) and mean[0] == pytest.approx(1 / 12) and mean[-1] == pytest.approx(11 / 12)
    bound = kl_upper_bound(rewards / n, n, math.log(100))
    assert np.all(np.diff(bound) > 0) and np.all(bound >= rewards / n)
    assert kl_upper_bound(np.array([0.3]), np.array([100.0]), math.log(100))[0] < bound[3]
    config = SelectorConfig(variant="thompson", exploration_c=0.0)
    parts = score_components(np.ones(11), n, rewards, np.zeros(11), np.zeros(11), 110.0, config)
    assert np.all(np.diff(parts["score"]) > 0)


def test_bernoulli_kl_and_the_kl_bound_match_hand_values() -> None:
    assert bernoulli_kl(np.array(0.5), np.array(0.25)) == pytest.approx(0.5 * math.log(4 / 3))
    assert bernoulli_kl(np.array(0.0), np.array(0.4)) == pytest.approx(-math.log(0.6))
    assert bernoulli_kl(np.array(1.0), np.array(0.4)) == pytest.approx(-math.log(0.4))
    assert bernoulli_kl(np.array(0.3), np.array(0.3)) == pytest.approx(0.0)
    p, n, budget = np.array([0.5, 0.2, 0.9, 0.4]), np.array([2.0, 30.0, 7.0, 0.0]), math.log(50)
    q = kl_upper_bound(p, n, budget)
    np.testing.assert_allclose(n[:3] * bernoulli_kl(p[:3], q[:3]), budget, rtol=1e-9)
    assert q[3] == 1.0 and np.all(q[:3] > p[:3])
    assert kl_upper_bound(p, n, 0.0).tolist() == p.tolist()


@pytest.mark.parametrize("scale", [1.0, 0.3])
def test_thompson_draws_keep_the_posterior_mean_and_shrink_its_spread(scale) -> None:
    alpha, beta = np.full(40_000, 6.0), np.full(40_000, 4.0)
    draws = thompson_belief(alpha, beta, np.random.default_rng(5), scale)
    a, b = 6.0 / scale**2, 4.0 / scale**2
    assert draws.mean() == pytest.approx(0.6, abs=0.003)
    assert draws.std() == pytest.approx(math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))), rel=0.03)
    if scale < 1:
        assert draws.std() < 0.35 * math.sqrt(24 / (100 * 11))


def test_exploiting_draws_nothing() -> None:
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    mean = thompson_belief(np.array([2.0, 1.0]), np.array([1.0, 3.0]), rng, 0.0)
    assert mean.tolist() == [2 / 3, 0.25] and rng.bit_generator.state == before


def test_thompson_score_applies_the_cost_penalty_and_the_similarity_gate(tiny_db) -> None:
    # a's expected call costs (0.04 + 0.02) / 3 = 0.02: an answer worth 0.04 makes its penalty w_rep × 0.5 = 1.
    exploit = _by_id(vector_selector({"a": 10.0, "b": 1.0}, [[1, 0, 0], [0.6, 0.8, 0]], tiny_db,
                                     exploration_c=0.0, answer_value_usd=0.04), [1.0, 0, 0], 2)
    normalized = _by_id(vector_selector({"a": 10.0, "b": 1.0}, [[1, 0, 0], [0.6, 0.8, 0]], tiny_db,
                                        variant="normalized", answer_value_usd=0.04), [1.0, 0, 0], 2)
    prior_a, prior_b = (1000 * 10.0 + 500 * 20.0) / 1e6, (1000 * 1.0 + 500 * 2.0) / 1e6
    cost_a, cost_b = (0.04 + prior_a) / 3, (0.001 + prior_b) / 2
    a, b = exploit["a"], exploit["b"]
    assert set(a) == {*BAYES_COMPONENTS, "pooled_visits"} and set(normalized["a"]) == {*COMPONENTS, "pooled_visits"}
    assert a["cost_penalty"] == pytest.approx(1.0) and b["cost_penalty"] == pytest.approx(cost_b / cost_a)
    assert {k: v["cost_penalty"] for k, v in exploit.items()} == pytest.approx(
        {k: v["cost_penalty"] for k, v in normalized.items()})
    assert a["posterior_mean"] == pytest.approx(0.5) and b["posterior_mean"] == pytest.approx(2 / 3)
    assert a["score"] == pytest.approx((2 * 0.5 - 1.0 + 0.6) / 2 * sigmoid(10 * (0.6 - 0.4)))
    assert b["score"] == pytest.approx((2 * 2 / 3 - cost_b / cost_a + 0.36) / 2 * sigmoid(10 * (0.36 - 0.4)))
    learning = _by_id(vector_selector({"a": 10.0, "b": 1.0}, [[1, 0, 0], [0.6, 0.8, 0]], tiny_db,
                                      answer_value_usd=0.04), [1.0, 0, 0], 2)
    for parts in learning.values():
        assert parts["score"] == pytest.approx(
            (2 * parts["belief"] - parts["cost_penalty"] + parts["s_sim"]) / 2 * parts["gate"])
        assert parts["exploration"] == pytest.approx(2 * (parts["belief"] - parts["posterior_mean"]) / 2)


def test_a_free_tool_agent_pays_no_cost_penalty() -> None:
    db = DADB()
    for agent_id, cost in (("tool", 0.0), ("llm", 0.01)):
        for _ in range(5):
            db.record(agent_id, 1.0, cost, 10)
    parts = _by_id(vector_selector({"tool": 0.0, "llm": 5.0}, [[1, 0], [1, 0]], db, answer_value_usd=0.02),
                   [1.0, 0], 2)
    assert parts["tool"]["cost_penalty"] == 0.0 and parts["llm"]["cost_penalty"] == pytest.approx(1.0)


def test_kl_ucb_components_match_the_hand_computed_bound(tiny_db) -> None:
    parts = _by_id(vector_selector({"a": 10.0, "b": 1.0}, [[1, 0, 0], [0.6, 0.8, 0]], tiny_db,
                                   variant="kl-ucb", answer_value_usd=0.04), [1.0, 0, 0], 2)
    a = parts["a"]  # 2 visits, mean reward 0.5, N = 3
    assert 2 * bernoulli_kl(np.array(0.5), np.array(a["belief"])) == pytest.approx(math.log(3 + 1.01))
    assert a["score"] == pytest.approx((2 * a["belief"] - 1.0 + 0.6) / 2 * sigmoid(2.0))


def test_a_frozen_dadb_is_exploited_deterministically(tiny_db) -> None:
    picks = []
    for seed in (1, 2):
        selector = vector_selector({"a": 1.0, "b": 1.0, "c": 1.0}, np.eye(3), tiny_db, seed=seed,
                                   exploration_c=0.0)
        rounds = [_by_id(selector, [1.0, 0.9, 0.8], 3) for _ in range(3)]
        assert rounds[0] == rounds[1] == rounds[2]
        assert all(p["belief"] == p["posterior_mean"] for p in rounds[0].values() if p["visits"] > 0)
        assert rounds[0]["c"]["visits"] == 0 and rounds[0]["c"]["belief"] == 1.0
        picks.append([c.agent.id for c in selector.select_vector(np.array([1.0, 0.9, 0.8]), 3)])
    assert picks[0] == picks[1]


def test_test_mode_teams_exploit_and_training_teams_sample() -> None:
    from reso.graphs.team import build_team

    hashed = {"selection.embedder": "hash:64"}
    frozen = build_team(ReSoSettings().replace(hashed, mode="test")).selector.config
    learning = build_team(ReSoSettings().replace(hashed, mode="train")).selector.config
    assert frozen.variant == learning.variant == "thompson"
    assert frozen.exploration_c == 0.0 and learning.exploration_c == 0.3
    # A training run may ask for plain Thompson sampling; a frozen DADB still exploits.
    plain_thompson = {**hashed, "selection.exploration_c": 1.0}
    plain = build_team(ReSoSettings().replace(plain_thompson, mode="train")).selector.config
    still_frozen = build_team(ReSoSettings().replace(plain_thompson, mode="test")).selector.config
    assert plain.exploration_c == 1.0 and still_frozen.exploration_c == 0.0


def test_thompson_draws_are_reproducible_by_seed(tiny_db) -> None:
    def beliefs(seed: int) -> list[list[float]]:
        selector = vector_selector({"a": 1.0, "b": 1.0}, [[1, 0], [0.9, 0.1]], tiny_db, seed=seed)
        return [sorted(c.terms.belief for c in selector.select_vector(np.array([1.0, 0]), 2))
                for _ in range(4)]

    first = beliefs(7)
    assert first == beliefs(7) and first != beliefs(8)
    assert len({tuple(row) for row in first}) == 4  # a fresh draw per subtask


def test_thompson_without_a_generator_is_refused() -> None:
    config = SelectorConfig()
    with pytest.raises(ValueError, match="random generator"):
        score_components(np.ones(2), np.ones(2), np.ones(2), np.zeros(2), np.zeros(2), 2.0, config)


def test_selections_draw_alike_whatever_order_they_run_in(tiny_db) -> None:
    # Sibling subtasks select in worker threads in a varying order: each one's draws depend on its own text
    # (and how often that text was selected), not on who went first.
    def draws(order: list[str]) -> dict[str, list[tuple[str, float]]]:
        selector = ReputationSelector(priced_pool({"a": 1.0, "b": 1.0}), tiny_db, HASH, seed=7)
        return {text: [(c.agent.id, c.terms.belief) for c in selector.select(text, 2)]
                for text in order}

    forward, backward = draws(["first subtask", "second subtask"]), draws(["second subtask", "first subtask"])
    assert forward == backward
    assert forward["first subtask"] != forward["second subtask"]
