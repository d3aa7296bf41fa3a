"""Shared builders for the coarse-stage selector tests (UCB variants and the Bayesian ones alike).

A pool of agents priced per test, a selector over hand-set profile vectors (so similarities are known
exactly), a tiny DADB with hand-countable statistics, and a candidate's score terms set by hand
(`scored_terms`, for the fine stage's tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from reso.agents.dadb.sqlite import DADB
from reso.agents.dadb.stats import AgentStats
from reso.agents.pool import Pool, pool_from_dict
from reso.agents.selection.candidate_score import CandidateScore
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.embeddings import load_embedder
from reso.agents.selection.index import ProfileIndex
from reso.agents.selection.selector import ReputationSelector

HASH = load_embedder("hash:64")


def priced_pool(prices: dict[str, float]) -> Pool:
    """One agent per id, input priced at `p` USD/M tokens and output at `2p`."""
    return pool_from_dict({"agents": [
        {"id": agent_id, "model": {"spec": f"openai:{agent_id}", "price_in": p, "price_out": 2 * p},
         "role": agent_id, "profile": f"expert {agent_id}"}
        for agent_id, p in prices.items()
    ]})


def vector_selector(prices, vectors, dadb=None, *, seed: int | None = 0, answer_value_usd: float = math.inf,
                    **config) -> ReputationSelector:
    """A selector whose profile vectors are `vectors` (one row per agent); the seed defaults to 0, the value
    of a right answer to infinity; the other keywords are `SelectorConfig` fields."""
    pool = priced_pool(prices)
    index = ProfileIndex.build(pool.ids, np.asarray(vectors, dtype=np.float32))
    return ReputationSelector(pool, dadb or DADB(), HASH, SelectorConfig(**config), index=index, seed=seed,
                              answer_value_usd=answer_value_usd)


def tiny_dadb() -> DADB:
    """Agent a: 2 visits, reward 1 of 2, 0.02 USD each; agent b: 1 visit, reward 1, 0.001 USD."""
    db = DADB()
    db.record("a", 1.0, 0.02, 10)
    db.record("a", 0.0, 0.02, 10)
    db.record("b", 1.0, 0.001, 10)
    return db


class CountingDADB(DADB):
    """A SQLite DADB that counts its statistics reads (`stats`), which is what a cache reload costs."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.reads = 0

    def stats(self, agent_ids: Sequence[str] | None = None, domain: str | None = None) -> dict[str, AgentStats]:
        self.reads += 1
        return super().stats(agent_ids, domain)


def sigmoid(x: float) -> float:
    """The gate's logistic function, for hand-computed expectations."""
    return 1 / (1 + math.exp(-x))


def scored_terms(*, reputation: float = 1.0, visits: float = 0.0, **terms: float) -> CandidateScore:
    """A coarse-stage score with the given terms and neutral others: a perfect fit (similarity, gate 1), no
    price, w_rep 2, and a record of `visits` (also the pooled visits unless given) whose reward sum makes
    `reputation` its smoothed mean (r + 1) / (n + 1), as the UCB variants score it."""
    pooled = terms.pop("pooled_visits", visits)
    fields: dict[str, float] = {
        "similarity": 1.0, "s_sim": 0.6, "s_rep": 2.0 * reputation, "cost_penalty": 0.0, "base": 0.0,
        "exploration": 0.0, "gate": 1.0, "score": 1.0, "mean_cost": 0.0, "w_rep": 2.0,
        "reward_sum": reputation * (pooled + 1.0) - 1.0,
    }
    fields.update(terms)
    return CandidateScore(reputation=reputation, visits=visits, pooled_visits=pooled, **fields)
