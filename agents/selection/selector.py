"""The two-stage agent selector: FAISS retrieval of M agents, then a bandit score on those M, top k returned.

Coarse stage, per subtask: embed the subtask text (cached by text), take the `top_m` agents whose
profiles are most similar (`ProfileIndex`), every agent that shares a profile with one of them included
(`ProfileGroups`: models × roles share a role's profile, and a tie is never broken by position in the pool),
score them with the configured variant of `reso.agents.selection.scoring` (Thompson sampling by default,
KL-UCB or the UCB formulas) using statistics from the DADB (mirrored in memory by `StatsCache`), each
agent's record pooled with its model's in other roles and domains (`ModelPooling`), and return the `k` best
as `Candidate`s carrying every term of their score, typed (`CandidateScore`). Ties are broken by a tiny
seeded random draw; Thompson draws come from the same seeded generator, one stream per selection keyed by
the subtask text and how often it was selected before, so concurrent selections draw alike whatever order
they run in. The engine's fine stage
(`reso.graphs.fine_stage`) runs those candidates and keeps the best-scored answer; `update` feeds each
candidate's reward and cost back to the DADB (a no-op in test mode).

`Selector` is the protocol every selector implements (these two, the evaluation's pinned baselines, test
fakes): `select` with an `exclude` set of agent ids that must not be returned, and `update`.

To select by an LLM-written target expert profile instead of the raw subtask (the paper's way), pass
`TargetProfileWriter(model).write(subtask)` from `reso.agents.selection.target_profile` to `select`.

`RandomSelector` is the paper's random-selection ablation with the same interface, drawing from the same
keyed streams (`SelectionStreams`).
"""

from __future__ import annotations

import math
import threading
import zlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from reso.agents.dadb.base import AgentDatabase
from reso.agents.pool import Pool
from reso.agents.profiles import Agent
from reso.agents.selection.candidate_score import CandidateScore, Rule, RuleChoice
from reso.agents.selection.config import SelectorConfig, check_answer_value
from reso.agents.selection.embeddings import Embedder
from reso.agents.selection.index import ProfileIndex, index_path_for_db, profile_index_for_pool
from reso.agents.selection.pooled_stats import ModelPooling
from reso.agents.selection.profile_groups import ProfileGroups
from reso.agents.selection.scoring import score_components
from reso.agents.selection.stats_cache import StatsCache

__all__ = ["Candidate", "RandomSelector", "ReputationSelector", "Selector"]


class SelectionStreams:
    """The random stream of each selection, keyed by the seed, the subtask text and how often that text was
    selected before: sibling subtasks (and concurrent questions) select in a varying order, and one shared
    stream would hand them different draws from run to run. Without a seed, one unseeded stream serves all."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self.shared = np.random.default_rng(seed)
        self._draws: dict[int, int] = {}
        self._lock = threading.Lock()

    def for_subtask(self, subtask: str) -> np.random.Generator:
        if self.seed is None:
            return self.shared
        key = zlib.crc32(subtask.encode("utf-8"))
        with self._lock:
            count = self._draws.get(key, 0)
            self._draws[key] = count + 1
        return np.random.default_rng([self.seed, key, count])


@dataclass(frozen=True)
class Candidate:
    """An agent chosen to answer a subtask, with its score and what made it: the coarse stage's terms
    (`terms`), or a rule (`rule`: a pinned baseline, the integration step's exact tool, a random draw), or
    neither (a candidate built by hand); `domain` is the DADB row its reward goes to."""

    agent: Agent
    score: float
    terms: CandidateScore | None = None
    domain: str | None = None
    rule: RuleChoice | None = None

    def selection_record(self) -> dict[str, float]:
        """What the run record keeps of how the candidate was chosen (`reso.graphs.run_records`' `selection`)."""
        if self.terms is not None:
            return self.terms.as_record()
        return self.rule.as_record() if self.rule is not None else {}


class Selector(Protocol):
    """What the engine asks of a selector."""

    def select(self, subtask: str, k: int = 1, *, domain: str | None = None,
               exclude: Collection[str] = ()) -> list[Candidate]:
        """Up to k agents for `subtask`, best first, none of whose ids is in `exclude`."""
        ...

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *,
               domain: str | None = None) -> None:
        """Learn one candidate's reward and cost (a selector that learns nothing ignores it)."""
        ...


class ReputationSelector:
    """The paper's coarse stage, made scalable: FAISS top-M retrieval by profile similarity, then a vectorised
    bandit score of similarity, reputation (the DADB's success record) and cost (`SelectorConfig.variant`:
    Thompson sampling by default)."""

    def __init__(
        self,
        pool: Pool | Sequence[Agent],
        dadb: AgentDatabase,
        embedder: Embedder,
        config: SelectorConfig | None = None,
        index: ProfileIndex | None = None,
        stats: StatsCache | None = None,
        *,
        seed: int | None = None,
        answer_value_usd: float = math.inf,
    ) -> None:
        """Build the selector over a pool; the profile index is built (or loaded) when not given.

        Args:
            pool: The agents.
            dadb: Statistics store; its mode decides whether `update` writes.
            embedder: Embeds subtasks (and the profiles, when no index is given).
            config: Weights; `SelectorConfig()` by default.
            index: A prebuilt profile index in pool order. When None, the index is built from the pool and,
                for a DADB file, cached next to it as `<db>.faiss` (rebuilt when the pool changes).
            stats: The in-memory statistics of `dadb` for this pool, read and recorded through; the team's
                (`reso.graphs.team.build_team` hands it in), so one process mirrors a DADB once. When None,
                the selector makes its own.
            seed: Seed of the tie-breaking jitter and the Thompson draws (None: unseeded).
            answer_value_usd: What a right answer is worth, in USD, against which every candidate's expected
                cost is priced (the run's budget knob; inf: cost counts for nothing).
        """
        self.pool = pool
        self.agents = list(pool)
        self.dadb = dadb
        self.embedder = embedder
        self.config = config or SelectorConfig()
        self.answer_value_usd = check_answer_value(answer_value_usd)
        if index is None:
            cache = index_path_for_db(dadb.path) if dadb.path is not None else None
            index = profile_index_for_pool(self.agents, embedder, cache)
        ids = [agent.id for agent in self.agents]
        if index.agent_ids != ids:
            raise ValueError("the profile index does not match the pool (different agent ids or order)")
        self.index = index
        self._position = {agent_id: i for i, agent_id in enumerate(ids)}
        cfg = self.config
        self._prior_cost = np.array(
            [a.cost_usd(cfg.prior_input_tokens, cfg.prior_output_tokens) for a in self.agents], dtype=np.float64
        )
        if stats is None:
            stats = StatsCache(dadb, ids)
        elif stats.dadb is not dadb or stats.agent_ids != ids:
            raise ValueError("the statistics cache is of another DADB or pool")
        self.stats = stats
        self._streams = SelectionStreams(seed)
        self.groups = ProfileGroups.of_vectors(index.vectors())
        self.pooling = ModelPooling([agent.model.spec for agent in self.agents],
                                    float(cfg.role_weight or 0.0), float(cfg.domain_prior or 0.0))

    def select(
        self, subtask: str, k: int = 1, *, domain: str | None = None, exclude: Collection[str] = ()
    ) -> list[Candidate]:
        """The k best agents for one subtask text, best first, with the terms of their score."""
        query = self.embedder.embed([subtask])[0].reshape(1, -1)
        sims, positions = self.index.search_positions(query, self._m(k, exclude))
        return self._rank(sims[0], positions[0], k, domain, exclude, self._streams.for_subtask(subtask))

    def select_vector(
        self, query: np.ndarray, k: int = 1, *, domain: str | None = None, exclude: Collection[str] = ()
    ) -> list[Candidate]:
        """`select` from a precomputed query embedding (benchmarks, or callers with their own embeddings)."""
        sims, positions = self.index.search_positions(np.asarray(query).reshape(1, -1), self._m(k, exclude))
        return self._rank(sims[0], positions[0], k, domain, exclude)

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *, domain: str | None = None) -> None:
        """Record a candidate's reward and cost in the DADB (nothing is written in test mode)."""
        self.stats.record(agent_id, reward, cost_usd, tokens, domain)

    def _m(self, k: int, exclude: Collection[str]) -> int:
        return min(len(self.agents), max(self.config.top_m, k) + len(exclude))

    def _rank(
        self, sims: np.ndarray, positions: np.ndarray, k: int, domain: str | None, exclude: Collection[str],
        rng: np.random.Generator | None = None,
    ) -> list[Candidate]:
        rng = rng if rng is not None else self._streams.shared
        sims, positions = self._retrieved(sims, positions, max(self.config.top_m, k), exclude)
        if positions.size == 0:
            return []
        if self.config.per_domain and domain is None:
            domain = self.agents[positions[int(np.argmax(sims))]].domain
        domain = domain if self.config.per_domain else None
        table = self.stats.table(domain)
        record = self.pooling.record(positions, table, self.stats.table(None) if domain is not None else None)
        parts = score_components(
            sims, record.visits, record.reward_sum, record.cost_sum,
            self._prior_cost[positions], table.total_visits, self.config, rng,
            answer_value_usd=self.answer_value_usd,
        )
        # `visits` stays the agent's own record in the domain; the score read the pooled one.
        parts["pooled_visits"], parts["visits"] = parts["visits"], table.visits[positions].astype(np.float64)
        jitter = rng.random(positions.size)
        ranked = _head_ranking(parts["score"], jitter, 8 * k + 16)
        if not self.config.distinct_models:
            order = [int(i) for i in ranked[:k]]
        else:
            order = self._diverse(ranked, positions, k)
            if ranked.size < positions.size and len({self.agents[positions[i]].model.spec for i in order}) < k:
                # The head holds fewer models than k: other models may wait further down the ranking.
                order = self._diverse(np.lexsort((jitter, -parts["score"])), positions, k)
        w_rep = float(self.config.w_rep)
        return [
            Candidate(
                agent=self.agents[positions[i]],
                score=float(parts["score"][i]),
                terms=CandidateScore.of(parts, i, w_rep=w_rep, reward_sum=float(record.reward_sum[i])),
                domain=domain,
            )
            for i in order
        ]

    def _retrieved(self, sims: np.ndarray, positions: np.ndarray, m: int,
                   exclude: Collection[str]) -> tuple[np.ndarray, np.ndarray]:
        """The retrieved agents, none excluded: the top m, or, where agents share a profile, every agent of
        each profile among the hits (`ProfileGroups`), so a tie is never broken by position in the pool."""
        banned = np.array([self._position[a] for a in exclude if a in self._position], dtype=np.int64)
        keep = positions >= 0
        if banned.size:
            keep &= ~np.isin(positions, banned)
        sims, positions = sims[keep], positions[keep]
        if not (self.groups.shared and self.config.whole_profiles):
            return sims[:m], positions[:m]
        sims, positions = self.groups.expand(sims, positions, m)
        if not banned.size:
            return sims, positions
        keep = ~np.isin(positions, banned)
        return sims[keep], positions[keep]

    def _diverse(self, ranked: np.ndarray, positions: np.ndarray, k: int) -> list[int]:
        """The best k of `ranked`, taking at most one agent per base model until every model is used."""
        chosen: list[int] = []
        models: set[str] = set()
        for i in ranked:
            spec = self.agents[positions[i]].model.spec
            if spec not in models:
                chosen.append(int(i))
                models.add(spec)
                if len(chosen) == k:
                    return chosen
        rest = [int(i) for i in ranked if int(i) not in chosen]
        return chosen + rest[: k - len(chosen)]


def _head_ranking(score: np.ndarray, jitter: np.ndarray, head: int) -> np.ndarray:
    """The best `head` positions by score (ties by jitter), best first, plus any tied with the last of them.

    Only the head of the ranking is read; fully sorting the thousands of candidates that a shared profile can
    bring would cost more than the rest of the selection."""
    if score.size <= head:
        return np.lexsort((jitter, -score))
    threshold = score[np.argpartition(-score, head - 1)[head - 1]]
    top = np.flatnonzero(score >= threshold)
    return top[np.lexsort((jitter[top], -score[top]))]


class RandomSelector:
    """Uniformly random k agents per subtask (the paper's ablation); same interface as `ReputationSelector`."""

    def __init__(
        self,
        pool: Pool | Sequence[Agent],
        dadb: AgentDatabase | None = None,
        embedder: Embedder | None = None,
        config: SelectorConfig | None = None,
        index: ProfileIndex | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        self.pool = pool
        self.agents = list(pool)
        self.dadb = dadb
        self.embedder = embedder
        self.config = config or SelectorConfig()
        self.index = index
        self._streams = SelectionStreams(seed)

    def select(
        self, subtask: str, k: int = 1, *, domain: str | None = None, exclude: Collection[str] = ()
    ) -> list[Candidate]:
        """k distinct agents drawn uniformly, from the subtask's own stream (`SelectionStreams`), so a seeded
        run draws alike whatever order its questions run in; the domain is ignored."""
        return self._draw(self._streams.for_subtask(subtask), k, exclude)

    def select_vector(
        self, query: np.ndarray, k: int = 1, *, domain: str | None = None, exclude: Collection[str] = ()
    ) -> list[Candidate]:
        """k agents from the one seeded stream: a vector has no text to key a stream by (the routing
        benchmark selects this way, one selection after another)."""
        return self._draw(self._streams.shared, k, exclude)

    def _draw(self, rng: np.random.Generator, k: int, exclude: Collection[str]) -> list[Candidate]:
        allowed = [i for i, agent in enumerate(self.agents) if agent.id not in exclude] if exclude else None
        size = len(allowed) if allowed is not None else len(self.agents)
        count = min(k, size)
        if count == 0:
            return []
        draw = rng.choice(size, size=count, replace=False)
        picks = [allowed[i] for i in draw] if allowed is not None else [int(i) for i in draw]
        return [
            Candidate(agent=self.agents[p], score=0.0, rule=RuleChoice(Rule.RANDOM_RANK, float(rank)))
            for rank, p in enumerate(picks)
        ]

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *, domain: str | None = None) -> None:
        """Record the reward in the DADB too, so a random run still leaves statistics behind."""
        if self.dadb is not None:
            self.dadb.record(agent_id, reward, cost_usd, tokens, domain)
