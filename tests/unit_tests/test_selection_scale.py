"""Selection over many agents that share profiles: every agent that fits is reachable whatever its place in the
pool, and what is learned about a model in one role or domain counts in its others."""

from __future__ import annotations

import numpy as np
import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.pool import Pool, pool_from_dict
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.embeddings import load_embedder
from reso.agents.selection.pooled_stats import ModelPooling
from reso.agents.selection.profile_groups import ProfileGroups
from reso.agents.selection.selector import ReputationSelector
from reso.agents.selection.stats_cache import StatsTable
from reso.evals.bench.routing import PLAIN_TOP_M, UNPOOLED, shared_profile_arms, simulate

ROLES = ("Algebra", "Geometry", "Probability and Statistics", "Arithmetic Word Problems")
EMBEDDER = load_embedder("hash:64")


def models_by_roles(models: int) -> Pool:
    """`models` models in the four roles, as a pool file lists them: the same profile text for every model
    of a role, models in pool order m00, m01, …"""
    return pool_from_dict({
        "models": [{"spec": f"openai:m{i:02d}", "name": f"m{i:02d}", "price_in": 1.0, "price_out": 1.0}
                   for i in range(models)],
        "roles": list(ROLES),
    })


def selector(pool: Pool, dadb: DADB, *, seed: int = 0, **config) -> ReputationSelector:
    return ReputationSelector(pool, dadb, EMBEDDER, SelectorConfig(**config), seed=seed)


def test_an_agent_that_fits_is_selected_wherever_the_pool_lists_it() -> None:
    # 40 models share each role's profile. The one reliable model is listed last: a top-16 search that breaks
    # the tie by position never offers it (the defect this test guards against); whole profiles always do.
    pool = models_by_roles(40)
    dadb = DADB(mode="train")
    for agent in pool:
        good = agent.model.spec == "openai:m39"
        for _ in range(20):
            dadb.record(agent.id, 1.0 if good else 0.2, 0.001, 10, domain=None)
    dadb.freeze()
    subtask = "Algebra: solve x^2 - 5x + 6 = 0 for the larger root."
    picked = selector(pool, dadb).select(subtask, 1)
    assert picked[0].agent.model.spec == "openai:m39"
    plain = selector(pool, dadb, whole_profiles=False, role_weight=0.0, domain_prior=0.0).select(subtask, 1)
    assert plain[0].agent.model.spec != "openai:m39"  # today's search, kept for comparison, misses it


def test_every_model_of_the_matching_role_is_a_candidate_and_ties_never_follow_pool_order() -> None:
    pool = models_by_roles(40)
    fresh = selector(pool, DADB())
    candidates = fresh.select("Geometry: the area of a triangle with sides 3, 4 and 5.", 40)
    assert len({c.agent.model.spec for c in candidates}) == 40
    assert len({c.agent.role for c in candidates}) == 1
    # Never visited, all tie: the first pick is drawn, not the first listed.
    firsts = {selector(pool, DADB(), seed=seed).select("Geometry: a circle of radius 2.", 1)[0]
              .agent.model.spec
              for seed in range(12)}
    assert len(firsts) > 3


def test_exclusion_holds_inside_a_profile_group() -> None:
    pool = models_by_roles(5)
    algebra = [a.id for a in pool if a.role == "Algebra"]
    picked = selector(pool, DADB()).select("Algebra: factor x^2 - 1.", 5, exclude=algebra[:4])
    assert algebra[4] in {c.agent.id for c in picked}
    assert not {c.agent.id for c in picked} & set(algebra[:4])


def test_profile_groups_expand_whole_groups_in_hit_order() -> None:
    vectors = np.array([[1, 0], [0, 1], [1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    groups = ProfileGroups.of_vectors(vectors)
    assert groups.count == 3 and groups.shared
    sims, positions = groups.expand(np.array([1.0, 1.0, 0.6], dtype=np.float32), np.array([2, 0, 4]), m=2)
    assert positions.tolist() == [0, 2] and sims.tolist() == [1.0, 1.0]
    sims, positions = groups.expand(np.array([1.0, 0.6, 0.0], dtype=np.float32), np.array([0, 4, 1]), m=3)
    assert positions.tolist() == [0, 2, 4] and sims.tolist() == pytest.approx([1.0, 1.0, 0.6])
    distinct = ProfileGroups.of_vectors(np.eye(3, dtype=np.float32))
    assert not distinct.shared


def _table(visits, rewards) -> StatsTable:
    visits, rewards = np.asarray(visits, dtype=float), np.asarray(rewards, dtype=float)
    return StatsTable(visits, rewards, visits * 0.01, float(visits.sum()), (0, 0))


def test_pooling_shares_a_model_s_roles_and_seeds_a_new_domain_from_the_others() -> None:
    # Positions 0-1: model A in two roles; 2: model B. Domain table: A's role 0 has 4 visits (3 right).
    pooling = ModelPooling(["A", "A", "B"], role_weight=1.0, domain_prior=2.0)
    domain = _table([4, 0, 0], [3, 0, 0])
    overall = _table([4 + 10, 0, 5], [3 + 9, 0, 1])  # A: 10 more visits elsewhere (9 right); B: 5 (1 right)
    record = pooling.record(np.array([0, 1, 2]), domain, overall)
    # A's second role reads A's record here; both gain 2 pseudo-visits at A's 0.9 elsewhere; B gets 2 at 0.2.
    assert record.visits.tolist() == pytest.approx([6, 6, 2])
    assert record.reward_sum.tolist() == pytest.approx([3 + 1.8, 3 + 1.8, 0.4])
    apart = ModelPooling(["A", "A", "B"], role_weight=0.0, domain_prior=0.0).record(np.array([0, 1, 2]), domain, overall)
    assert apart.visits.tolist() == [4, 0, 0] and apart.reward_sum.tolist() == [3, 0, 0]


def test_a_model_learned_in_one_role_is_not_tried_again_as_new_in_another() -> None:
    pool = models_by_roles(3)
    dadb = DADB(mode="train")
    for _ in range(6):
        dadb.record("m00/algebra", 1.0, 0.001, 10, domain="algebra")
    parts = {c.agent.id: c.selection_record() for c in selector(pool, dadb, exploration_c=0.0).select_vector(
        EMBEDDER.embed(["Algebra: " + ROLES[0]])[0], 12, domain="algebra")}
    learned = [p for agent, p in parts.items() if agent.startswith("m00/")]
    assert all(p["pooled_visits"] == 6 and p["posterior_mean"] == pytest.approx(7 / 8) for p in learned)
    assert sorted(p["visits"] for p in learned) == [0, 0, 0, 6]  # only its own role visited the row


def test_routing_on_shared_profiles_finds_the_best_model_among_many() -> None:
    # 24 models × 4 roles with skills hidden from the profiles: the default policy learns the best model;
    # the plain top-M search cannot offer the models past the first 16 of a role.
    arms = shared_profile_arms(24, 4, seed=1)
    outcome = simulate(arms, subtasks=600, seed=1, only=["thompson", UNPOOLED, PLAIN_TOP_M])["policies"]
    assert outcome["thompson"]["regret_vs_random"] <= 0.25
    assert outcome[PLAIN_TOP_M]["best_pick_rate"] < outcome["thompson"]["best_pick_rate"]
    assert outcome["thompson"]["regret"] < min(outcome[UNPOOLED]["regret"], outcome[PLAIN_TOP_M]["regret"])


def test_strengths_a_pool_states_tell_models_apart_in_retrieval() -> None:
    pool = pool_from_dict({
        "models": [{"spec": "openai:counter", "price_in": 1.0, "price_out": 1.0,
                    "strengths": "counting problems, combinations, permutations and dice probabilities"},
                   {"spec": "openai:plain", "price_in": 1.0, "price_out": 1.0}],
        "roles": ["Algebra", "Probability and Statistics"],
    })
    chosen = selector(pool, DADB())
    assert chosen.groups.count == 4  # the strengths make each model's profile its own
    hits = chosen.index.search(EMBEDDER.embed(["How many permutations of the dice and combinations are there?"])[0], 4)
    assert hits[0][0].startswith("counter/")
