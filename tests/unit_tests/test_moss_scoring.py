"""The `moss` coarse-stage variant (anytime MOSS index on the Bayesian variants' frame): the index against hand
values, its components (prior mean, monotone in reward, cost penalty and gate), deterministic exploitation,
seeded tie-breaks, and the settings that select it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.posterior import moss_index
from reso.agents.selection.scoring import BAYES_COMPONENTS, score_components
from reso.agents.selection.selector import ReputationSelector
from reso.graphs.settings import ReSoSettings
from tests.selector_helpers import sigmoid, tiny_dadb, vector_selector


def _by_id(selector: ReputationSelector, query, k: int) -> dict[str, dict[str, float]]:
    return {c.agent.id: c.selection_record()
            for c in selector.select_vector(np.asarray(query, dtype=np.float64), k)}


def test_the_index_matches_hand_values() -> None:
    mean, count = np.array([0.5, 0.5, 0.9, 0.3, 0.7]), np.array([2.0, 8.0, 1.0, 20.0, 0.0])
    index = moss_index(mean, count, typical=8.0, scale=0.2)
    assert index[0] == pytest.approx(0.5 + 0.2 * math.sqrt(math.log(4) / 2))
    # No bonus from the typical visit count on; capped at 1 (a success rate); 1 before any visit.
    assert index[1] == 0.5 and index[3] == 0.3
    assert index[2] == 1.0 and 0.9 + 0.2 * math.sqrt(math.log(8)) > 1
    assert index[4] == 1.0
    assert moss_index(mean, count, 8.0, 0.0)[:4].tolist() == mean[:4].tolist()


def test_defaults_and_the_settings_that_select_it() -> None:
    assert SelectorConfig(variant="moss").exploration_c == 0.2 and SelectorConfig(variant="moss").per_domain
    assert ReSoSettings().replace({"selection.variant": "moss"}).selection.variant == "moss"
    from reso.graphs.team import build_team

    moss = {"selection.embedder": "hash:64", "selection.variant": "moss"}
    learning = build_team(ReSoSettings().replace(moss, mode="train")).selector.config
    frozen = build_team(ReSoSettings().replace(moss, mode="test")).selector.config
    assert learning.variant == frozen.variant == "moss"
    assert learning.exploration_c == 0.2 and frozen.exploration_c == 0.0


@pytest.mark.parametrize("exploration_c", [None, 0.0])
def test_before_any_visit_the_mean_is_the_prior_s_and_the_belief_is_optimistic(exploration_c) -> None:
    parts = _by_id(vector_selector({"a": 1.0, "b": 1.0}, [[1, 0], [1, 0]], variant="moss",
                                   exploration_c=exploration_c), [1.0, 0], 2)
    for row in parts.values():
        assert set(row) == {*BAYES_COMPONENTS, "pooled_visits"}
        assert row["visits"] == 0 and row["posterior_mean"] == row["reputation"] == 0.5
        assert row["belief"] == 1.0 and row["exploration"] == pytest.approx(2.0 * (1.0 - 0.5) / 2)


@pytest.mark.parametrize("exploration_c", [0.2, 0.0])
def test_belief_and_score_grow_with_reward(exploration_c) -> None:
    n = np.full(11, 10.0)
    rewards = np.arange(11, dtype=np.float64)
    config = SelectorConfig(variant="moss", exploration_c=exploration_c)
    # A typical candidate has 40 visits: each of these gets the bonus sqrt(ln 4 / 10) * c.
    visits = np.append(n, 370.0)
    parts = score_components(np.ones(12), visits, np.append(rewards, 185.0), np.zeros(12), np.zeros(12),
                             float(visits.sum()), config)
    belief, score = parts["belief"][:11], parts["score"][:11]
    expected = np.minimum(rewards / 10 + exploration_c * math.sqrt(math.log(4) / 10), 1.0)
    if exploration_c == 0:
        expected = (rewards + 1) / 12  # the posterior mean
    np.testing.assert_allclose(belief, expected)
    assert np.all(np.diff(belief) >= 0) and np.all(np.diff(score) >= 0) and score[-1] > score[0]
    assert np.all(np.diff(parts["posterior_mean"][:11]) > 0)


def test_fewer_visits_at_the_same_mean_earn_a_larger_bonus() -> None:
    visits = np.array([2.0, 8.0, 32.0, 118.0])  # typical: 40
    parts = score_components(np.ones(4), visits, visits / 2, np.zeros(4), np.zeros(4), float(visits.sum()),
                             SelectorConfig(variant="moss"))
    bonus = parts["belief"] - 0.5
    assert np.all(np.diff(bonus) < 0) and bonus[0] > 0.1 and bonus[3] == 0.0


def test_the_cost_penalty_and_the_similarity_gate_are_applied() -> None:
    db = tiny_dadb()  # a: 1 of 2 at 0.02 USD a call; b: 1 of 1 at 0.001 USD
    vectors = [[1, 0, 0], [0.6, 0.8, 0]]
    parts = _by_id(vector_selector({"a": 10.0, "b": 1.0}, vectors, db, variant="moss", answer_value_usd=0.04),
                   [1.0, 0, 0], 2)
    prior_a, prior_b = (1000 * 10.0 + 500 * 20.0) / 1e6, (1000 * 1.0 + 500 * 2.0) / 1e6
    cost_a, cost_b = (0.04 + prior_a) / 3, (0.001 + prior_b) / 2
    a, b = parts["a"], parts["b"]
    assert a["cost_penalty"] == pytest.approx(1.0) and b["cost_penalty"] == pytest.approx(cost_b / cost_a)
    # Typical visits 1.5: a (2 visits) gets no bonus, b (1 visit, mean 1) is capped at 1.
    assert a["belief"] == pytest.approx(0.5) and b["belief"] == 1.0
    assert a["score"] == pytest.approx((2 * 0.5 - 1.0 + 0.6) / 2 * sigmoid(10 * (0.6 - 0.4)))
    assert b["score"] == pytest.approx((2 * 1.0 - cost_b / cost_a + 0.36) / 2 * sigmoid(10 * (0.36 - 0.4)))
    for row in parts.values():
        assert row["exploration"] == pytest.approx(2 * (row["belief"] - row["posterior_mean"]) / 2)


def test_a_cheaper_agent_wins_at_equal_record_and_similarity() -> None:
    db = DADB()
    for agent_id, per_call in (("dear", 0.02), ("cheap", 0.001)):
        for i in range(50):
            db.record(agent_id, 1.0 if i < 40 else 0.0, per_call, 1500)
    best = vector_selector({"dear": 10.0, "cheap": 0.5}, [[1, 0], [1, 0]], db,
                           variant="moss").select_vector(np.array([1.0, 0]), 1)[0]
    assert best.agent.id == "cheap" and best.terms.cost_penalty < 0.1


def test_exploration_off_scores_the_posterior_mean_deterministically() -> None:
    db = tiny_dadb()
    rows = []
    for seed in (1, 2):
        selector = vector_selector({"a": 1.0, "b": 1.0, "c": 1.0}, np.eye(3), db, seed=seed, variant="moss",
                                   exploration_c=0.0)
        rounds = [_by_id(selector, [1.0, 0.9, 0.8], 3) for _ in range(3)]
        assert rounds[0] == rounds[1] == rounds[2]
        assert rounds[0]["a"]["belief"] == pytest.approx(0.5) and rounds[0]["b"]["belief"] == pytest.approx(2 / 3)
        assert rounds[0]["c"]["belief"] == 1.0
        rows.append(rounds[0])
    assert rows[0] == rows[1]


def test_ties_are_broken_by_the_seeded_jitter_reproducibly() -> None:
    # Eight agents never tried: all believed perfect, so the seeded jitter orders them.
    prices = {f"x{i}": 1.0 for i in range(8)}
    vectors = [[1, 0]] * 8

    def order(seed: int) -> list[str]:
        selector = vector_selector(prices, vectors, seed=seed, variant="moss", distinct_models=False)
        return [c.agent.id for c in selector.select_vector(np.array([1.0, 0]), 8)]

    assert order(3) == order(3)
    assert len({tuple(order(seed)) for seed in range(4)}) > 1


def test_fractional_rewards_go_to_the_agent_s_row_for_the_domain() -> None:
    # The engine feeds rewards in [0, 1] per (agent, domain): without a prior from other domains
    # (domain_prior 0), the index reads that row's mean, not the agent's record on other domains.
    selector = vector_selector({"a": 1.0, "b": 1.0}, [[1, 0], [1, 0]], DADB(), seed=0, variant="moss",
                               domain_prior=0.0)
    for reward in (0.25, 0.75, 0.5):
        selector.update("a", reward, 0.001, 10, domain="geometry")
    selector.update("b", 0.9, 0.001, 10, domain="geometry")
    for _ in range(8):
        selector.update("a", 0.0, 0.001, 10, domain="algebra")
    geometry = {c.agent.id: c.selection_record()
                for c in selector.select_vector(np.array([1.0, 0]), 2, domain="geometry")}
    a, b = geometry["a"], geometry["b"]
    assert a["visits"] == 3 and a["posterior_mean"] == pytest.approx((1.5 + 1) / 5)
    assert a["belief"] == pytest.approx(0.5)  # 3 visits, more than the typical 2: no bonus
    assert b["visits"] == 1 and b["belief"] == pytest.approx(min(0.9 + 0.2 * math.sqrt(math.log(2)), 1.0))
    algebra = {c.agent.id: c.selection_record()
               for c in selector.select_vector(np.array([1.0, 0]), 2, domain="algebra")}
    assert algebra["a"]["visits"] == 8 and algebra["a"]["belief"] == 0.0 and algebra["b"]["belief"] == 1.0
