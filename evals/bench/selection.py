"""`reso bench selection`: per-subtask selection time, FAISS + vectorised bandit score against the paper's Python loop.

For each pool size N the benchmark makes N synthetic agents with random unit profile vectors and random
DADB statistics (every agent visited 1-50 times), then times, on the same query vectors:

- the FAISS selector: `ReputationSelector.select_vector`, i.e. the index search for the top M, the statistics
  lookup (the in-memory `StatsCache` checks the DADB's version, one SQLite `PRAGMA data_version` read,
  then gathers arrays), the vectorised bandit score of the M candidates, the top-k sort and the `Candidate`
  objects;
- the release's coarse stage (`ReleaseLoop` in `reso.evals.bench.paper_loop`): one asyncio coroutine per
  agent, cosine with numpy, averages over each agent's reward and cost history lists, the scalar score,
  a log line formatted per agent, then a full sort (`loop_ms_p50`, `speedup`);
- the leanest per-agent Python loop with the same score and pre-summed statistics, a lower bound for
  any per-agent loop (`plain_loop_ms_p50`, `speedup_vs_plain_loop`).

Query embedding is excluded from both sides (both would pay the same single embedding call). Queries are
a random agent's vector plus noise (cosine ~0.78 to it), so a meaningful best agent exists; the output
reports how often retrieval found it (`planted_recall`) and how often both methods picked the same top
agent as the release loop (`top1_agreement`). All sides use the paper variant of the score so only the search differs.
FAISS searches single-threaded (one query at a time gains nothing from threads, and OpenMP spinning on two
cores made timings erratic); the index is built with all threads.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from reso.agents.dadb.sqlite import DADB, AgentStats
from reso.agents.pool import Pool
from reso.agents.profiles import Agent, ModelSpec
from reso.agents.selection.config import SelectorConfig, Variant
from reso.agents.selection.embeddings import HashEmbedder
from reso.agents.selection.index import DEFAULT_HNSW_THRESHOLD, ProfileIndex
from reso.agents.selection.selector import ReputationSelector
from reso.evals.bench.paper_loop import ReleaseLoop, loop_agents, plain_loop_select

DEFAULT_SIZES = (63, 1000, 10_000, 100_000)
QUERY_NOISE = 0.8


def synthetic_pool(size: int, *, price_in: float = 0.15, price_out: float = 0.6, roles: int = 1) -> Pool:
    """N placeholder agents; only ids, models and prices matter to the selector. With `roles` R > 1 they are
    N / R models in R roles each (ids `model-M/role-R`, model-major), else N agents on N models."""
    if roles < 1 or size % roles:
        raise ValueError(f"{size} agents do not split into {roles} roles")
    model = ModelSpec(spec="openai:bench-model-0", price_in=price_in, price_out=price_out)
    template = Agent(id="agent-0", model=model, role="bench", profile="synthetic agent", system_prompt="-",
                     price_in=price_in, price_out=price_out)
    # model_copy skips validation, which would otherwise dominate building a 100k-agent pool.
    models = [model.model_copy(update={"spec": f"openai:bench-model-{m}"}) for m in range(size // roles)]
    if roles == 1:
        agents = [template.model_copy(update={"id": f"agent-{i:06d}", "model": models[i]}) for i in range(size)]
    else:
        agents = [template.model_copy(update={"id": f"model-{m:04d}/role-{r}", "model": models[m], "role": f"role-{r}"})
                  for m in range(size // roles) for r in range(roles)]
    return Pool(agents, name=f"bench-{size}")


def random_unit_vectors(count: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def planted_queries(vectors: np.ndarray, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Queries near randomly chosen agents: (query vectors, index of the agent each was planted at)."""
    targets = rng.integers(0, len(vectors), size=count)
    noise = random_unit_vectors(count, vectors.shape[1], rng)
    queries = vectors[targets] + QUERY_NOISE * noise
    return queries / np.linalg.norm(queries, axis=1, keepdims=True), targets


def random_stats(agent_ids: Sequence[str], rng: np.random.Generator) -> list[AgentStats]:
    visits = rng.integers(1, 51, size=len(agent_ids))
    success = rng.uniform(0.05, 0.9, size=len(agent_ids))
    rewards = rng.binomial(visits, success)
    costs = visits * rng.uniform(1e-4, 1e-2, size=len(agent_ids))
    return [
        AgentStats(agent_id, int(n), float(r), float(r), float(c), int(n) * 1500, 0.0)
        for agent_id, n, r, c in zip(agent_ids, visits, rewards, costs, strict=True)
    ]


def _time_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000.0, result


def _time_loop(
    select: Callable[[np.ndarray], list[tuple[str, float]]], queries: np.ndarray, budget_s: float,
    reference_top1: Sequence[str],
) -> tuple[list[float], float]:
    """Time a baseline on the queries until the budget is spent (at least 3 runs); also its top-1 agreement."""
    times, agree = [], 0
    started = time.perf_counter()
    for i, query in enumerate(queries):
        if i >= 3 and time.perf_counter() - started > budget_s:
            break
        elapsed, picked = _time_ms(partial(select, query))
        times.append(elapsed)
        agree += picked[0][0] == reference_top1[i]
    return times, agree / len(times)


def bench_size(
    size: int, *, repeats: int, dim: int, k: int, top_m: int, loop_budget_s: float, seed: int,
    hnsw_threshold: int = DEFAULT_HNSW_THRESHOLD, build_threads: int = 1,
) -> dict[str, Any]:
    """Measure one pool size; returns one row of the `results` list.

    The index is built with `build_threads` OpenMP threads; searches run with the current thread setting.
    """
    rng = np.random.default_rng(seed + size)
    random.seed(seed + size)
    pool = synthetic_pool(size)
    ids = pool.ids
    vectors = random_unit_vectors(size, dim, rng)
    import faiss

    search_threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(build_threads)
    build_s, index = _time_ms(lambda: ProfileIndex.build(ids, vectors, hnsw_threshold=hnsw_threshold))
    faiss.omp_set_num_threads(search_threads)
    dadb = DADB()
    stats_rows = random_stats(ids, rng)
    dadb.load_stats(stats_rows)
    config = SelectorConfig(top_m=top_m, variant=Variant.PAPER)
    selector = ReputationSelector(pool, dadb, HashEmbedder(8), config, index=index, seed=seed)
    queries, targets = planted_queries(vectors, repeats, rng)

    selector.select_vector(queries[0])  # warm-up: loads the statistics cache once
    faiss_ms, faiss_top1, found = [], [], 0
    for query, target in zip(queries, targets, strict=True):
        elapsed, picked = _time_ms(partial(selector.select_vector, query, k))
        faiss_ms.append(elapsed)
        faiss_top1.append(picked[0].agent.id)
        found += any(hit == ids[target] for hit, _ in index.search(query, top_m))

    release = ReleaseLoop(loop_agents(stats_rows), vectors, config)
    loop_ms, agree = _time_loop(lambda q: release.select(q, k), queries, loop_budget_s, faiss_top1)
    release.close()
    plain_stats = {s.agent_id: (s.visits, s.reward_sum, s.cost_sum) for s in stats_rows}
    total, rows = dadb.total_visits(), list(vectors)
    plain_ms, _ = _time_loop(lambda q: plain_loop_select(q, ids, rows, plain_stats, total, k, config),
                             queries, loop_budget_s / 2, faiss_top1)
    faiss_p50, loop_p50, plain_p50 = (float(np.median(x)) for x in (faiss_ms, loop_ms, plain_ms))
    return {
        "pool_size": size,
        "index": index.kind,
        "index_build_s": round(build_s / 1000.0, 3),
        "faiss_ms_p50": round(faiss_p50, 4),
        "faiss_ms_p90": round(float(np.percentile(faiss_ms, 90)), 4),
        "loop_ms_p50": round(loop_p50, 3),
        "speedup": round(loop_p50 / faiss_p50, 1),
        "plain_loop_ms_p50": round(plain_p50, 3),
        "speedup_vs_plain_loop": round(plain_p50 / faiss_p50, 1),
        "faiss_runs": len(faiss_ms),
        "loop_runs": len(loop_ms),
        "planted_recall": round(found / len(queries), 3),
        "top1_agreement": round(agree, 3),
    }


def bench_shared_profiles(size: int, roles: int, *, repeats: int, dim: int, k: int, top_m: int,
                          seed: int) -> dict[str, Any]:
    """One pool size as models × roles, a role's agents sharing one profile vector: the default selector
    (every agent of the matching role retrieved, records pooled per model, Thompson draws) side by side with
    the plain top-M search on per-agent records (the coarse stage before shared profiles were handled),
    interleaved in rounds so load on the machine hits both alike."""
    rng = np.random.default_rng(seed + size)
    pool = synthetic_pool(size, roles=roles)
    role_vectors = random_unit_vectors(roles, dim, rng)
    index = ProfileIndex.build(pool.ids, np.tile(role_vectors, (size // roles, 1)))
    dadb = DADB()
    dadb.load_stats(random_stats(pool.ids, rng))
    sides = {
        "whole_profiles": SelectorConfig(top_m=top_m),
        "plain_top_m": SelectorConfig(top_m=top_m, whole_profiles=False, role_weight=0.0, domain_prior=0.0),
    }
    selectors = {name: ReputationSelector(pool, dadb, HashEmbedder(8), config, index=index, seed=seed)
                 for name, config in sides.items()}
    queries, _ = planted_queries(role_vectors, repeats, rng)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for selector in selectors.values():
        selector.select_vector(queries[0])  # warm-up: loads the statistics cache once
    sims, positions = index.search_positions(queries[:1], top_m)
    scored = {"whole_profiles": int(selectors["whole_profiles"].groups.expand(sims[0], positions[0], top_m)[1].size),
              "plain_top_m": min(top_m, size)}
    for query in queries:
        for name, selector in selectors.items():
            elapsed, _ = _time_ms(partial(selector.select_vector, query, k))
            times[name].append(elapsed)
    whole, plain = (float(np.median(times[name])) for name in sides)
    return {
        "pool_size": size, "roles": roles, "agents_per_profile": size // roles, "index": index.kind,
        "whole_profiles_ms_p50": round(whole, 4), "plain_top_m_ms_p50": round(plain, 4),
        "ratio": round(whole / plain, 2),
        "candidates_scored": scored,
    }


def run_bench(
    sizes: Sequence[int] = DEFAULT_SIZES, *, repeats: int = 200, dim: int = 384, k: int = 2, top_m: int = 16,
    loop_budget_s: float = 3.0, seed: int = 0, progress: bool = True, roles: int = 4,
) -> dict[str, Any]:
    """Run every size and return the JSON-ready report (with target checks for the sizes present)."""
    import faiss

    build_threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    results = []
    for size in sizes:
        if progress:
            print(f"selection bench: {size} agents ...", file=sys.stderr, flush=True)
        results.append(bench_size(size, repeats=repeats, dim=dim, k=k, top_m=top_m,
                                  loop_budget_s=loop_budget_s, seed=seed, build_threads=build_threads))
    shared = [bench_shared_profiles(size, roles, repeats=repeats, dim=dim, k=k, top_m=top_m, seed=seed)
              for size in sizes if size <= 10_000 and size % roles == 0 and roles > 1]
    by_size = {row["pool_size"]: row for row in results}
    targets: dict[str, bool] = {}
    if 10_000 in by_size:
        targets["10k_speedup_at_least_100x"] = by_size[10_000]["speedup"] >= 100
        targets["10k_speedup_vs_plain_loop_at_least_100x"] = by_size[10_000]["speedup_vs_plain_loop"] >= 100
        targets["10k_faiss_under_1ms"] = by_size[10_000]["faiss_ms_p50"] < 1.0
    if 100_000 in by_size:
        targets["100k_faiss_under_5ms"] = by_size[100_000]["faiss_ms_p50"] < 5.0
    return {
        "benchmark": "selection",
        "dim": dim, "k": k, "top_m": top_m, "variant": Variant.PAPER, "seed": seed, "faiss_search_threads": 1,
        "faiss_build_threads": build_threads,
        "hnsw_threshold": DEFAULT_HNSW_THRESHOLD,
        "faiss_side_includes": "FAISS top-M search, DADB version check + in-memory stats gather, vectorised "
                               "UCB, top-k sort, Candidate objects",
        "loop_side_includes": "the release's coarse stage: a coroutine per agent gathered by asyncio, numpy "
                              "cosine, means over reward/cost history lists, scalar score, log-line "
                              "formatting (not written), full sort",
        "plain_loop_side_includes": "a plain Python loop over all agents: numpy cosine, pre-summed stats "
                                    "from a dict, scalar score, full sort",
        "excluded": "query embedding (same single call on both sides); index build (reported separately)",
        "results": results,
        "shared_profiles": shared,
        "shared_profiles_sides": "whole_profiles: the default selector (thompson), every agent sharing a hit's "
                                 "profile retrieved, records pooled per model; plain_top_m: the top M by index "
                                 "order among tied profiles, per-agent records",
        "targets": targets,
    }


def render_table(report: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"selection time per subtask (dim {report['dim']}, top-M {report['top_m']}, k {report['k']})")
    columns = ("agents", "index", "FAISS ms", "release ms", "x release", "plain ms", "x plain", "recall", "agree")
    for column in columns:
        table.add_column(column, justify="right")
    for row in report["results"]:
        table.add_row(str(row["pool_size"]), row["index"], f"{row['faiss_ms_p50']:.3f}", f"{row['loop_ms_p50']:.2f}",
                      f"{row['speedup']:.0f}x", f"{row['plain_loop_ms_p50']:.2f}", f"{row['speedup_vs_plain_loop']:.0f}x",
                      f"{row['planted_recall']:.2f}", f"{row['top1_agreement']:.2f}")
    if not report.get("shared_profiles"):
        return table
    from rich.console import Group

    shared = Table(title="shared profiles: the default selector against the plain top-M search")
    for column in ("agents", "roles", "whole profiles ms", "plain top-M ms", "ratio", "scored (whole / plain)"):
        shared.add_column(column, justify="right")
    for row in report["shared_profiles"]:
        picked = row["candidates_scored"]
        shared.add_row(str(row["pool_size"]), str(row["roles"]), f"{row['whole_profiles_ms_p50']:.3f}",
                       f"{row['plain_top_m_ms_p50']:.3f}", f"{row['ratio']:.2f}x",
                       f"{picked['whole_profiles']} / {picked['plain_top_m']}")
    return Group(table, shared)
