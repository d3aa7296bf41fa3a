"""`reso bench selection` at tiny sizes: valid JSON with the keys, and the loop agrees with the selector."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.agents.dadb.sqlite import DADB
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.embeddings import HashEmbedder
from reso.agents.selection.index import ProfileIndex
from reso.agents.selection.selector import ReputationSelector
from reso.evals.bench.paper_loop import ReleaseLoop, loop_agents, plain_loop_select
from reso.evals.bench.selection import (
    bench_size,
    planted_queries,
    random_stats,
    random_unit_vectors,
    synthetic_pool,
)
from reso.evals.cli import app


def test_cli_prints_json_last_with_the_required_keys() -> None:
    result = CliRunner().invoke(app, ["bench", "selection", "--sizes", "30,80", "--repeats", "5", "--dim", "16",
                                      "--loop-budget", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert [row["pool_size"] for row in report["results"]] == [30, 80]
    for row in report["results"]:
        assert {"pool_size", "faiss_ms_p50", "loop_ms_p50", "speedup", "plain_loop_ms_p50"} <= set(row)
        assert row["faiss_ms_p50"] > 0 and row["loop_ms_p50"] > 0 and row["index"] == "flat"
        assert row["speedup"] == pytest.approx(row["loop_ms_p50"] / row["faiss_ms_p50"], rel=0.05, abs=0.1)
        assert row["planted_recall"] == 1.0
    assert "query embedding" in report["excluded"]


def test_cli_rejects_bad_sizes() -> None:
    result = CliRunner().invoke(app, ["bench", "selection", "--sizes", "ten", "--json"])
    assert result.exit_code != 0


def test_hnsw_path_runs_and_finds_the_planted_agents() -> None:
    row = bench_size(400, repeats=8, dim=16, k=2, top_m=16, loop_budget_s=0.05, seed=1, hnsw_threshold=100)
    assert row["index"] == "hnsw" and row["pool_size"] == 400 and row["planted_recall"] >= 0.75


def test_baseline_loops_rank_like_the_selector_when_retrieval_keeps_everyone() -> None:
    rng = np.random.default_rng(4)
    pool = synthetic_pool(40)
    vectors = random_unit_vectors(40, 8, rng)
    stats = random_stats(pool.ids, rng)
    dadb = DADB()
    dadb.load_stats(stats)
    config = SelectorConfig(top_m=40, variant="paper")
    selector = ReputationSelector(pool, dadb, HashEmbedder(8), config,
                                  index=ProfileIndex.build(pool.ids, vectors), seed=0)
    table = {s.agent_id: (s.visits, s.reward_sum, s.cost_sum) for s in stats}
    release = ReleaseLoop(loop_agents(stats), vectors, config)
    try:
        for query in planted_queries(vectors, 5, rng)[0]:
            picked = selector.select_vector(query, 3)
            plain = plain_loop_select(query, pool.ids, list(vectors), table, dadb.total_visits(), 3, config)
            loop = release.select(query, 3)
            for baseline in (plain, loop):
                assert [agent_id for agent_id, _ in baseline] == [c.agent.id for c in picked]
                np.testing.assert_allclose([s for _, s in baseline], [c.score for c in picked], atol=2e-5)
    finally:
        release.close()


def test_loop_agent_histories_match_the_sums() -> None:
    agents = loop_agents([random_stats(["a"], np.random.default_rng(0))[0]])
    assert len(agents[0].scoring_history) == agents[0].visit == len(agents[0].inference_costs)
