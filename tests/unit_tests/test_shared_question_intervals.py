"""Intervals for composites that share source questions: the cluster-robust variance by source question on
hand-computed examples (the iid variance when no question is shared), against the simulated spread of
composites drawn from a question population, the paired difference and cost ratio, and how a comparison
decides between it and the per-item bootstrap from the dataset's source question ids."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from reso.evals.datasets import Problem
from reso.evals.reports.benchmark_table import benchmark_rows
from reso.evals.reports.clusters import CLUSTER_METHOD, NO_SOURCE_IDS, NOTHING_SHARED, resampling
from reso.evals.reports.compare import compare_runs, load_run
from reso.evals.reports.shared_questions import incidence, mean_variance, paired_cluster_robust
from reso.evals.reports.stats import paired_bootstrap, wilson_interval
from reso.evals.synth.mas import draw_groups
from tests.run_fixtures import result_row, write_run

Z = 1.959963984540054  # the normal 97.5 % quantile
# A hand-made sharing pattern: items 0 and 3 share a, 0 and 1 share b, 1 and 2 share c.
SHARING = [["a", "b"], ["b", "c"], ["c"], ["a", "d"]]


def _width(interval: list[float] | None) -> float:
    assert interval is not None
    return interval[1] - interval[0]


def test_items_of_distinct_questions_get_the_iid_variance():
    e = np.array([0.25, -0.75, 0.25, 0.25])  # y = 1, 0, 1, 1 less its mean
    pairs = incidence([["a", "b"], ["c"], ["d", "e", "f"], ["g"]])
    assert (pairs.n, pairs.count) == (4, 7)
    # Σ e² / n² = (3 · 0.0625 + 0.5625) / 16: the extra copies of an item's own term are taken away.
    assert mean_variance(pairs, e) == pytest.approx(0.046875, abs=1e-15)


def test_a_shared_question_adds_the_cross_product_of_its_items_once_per_question():
    e = np.array([0.5, -0.5, -0.5, 0.5])  # y = 1, 0, 0, 1 less its mean
    # S = (a 1.0, b 0.0, c -1.0, d 0.5): Σ S² = 2.25, less the extra own terms (k - 1 = 1, 1, 0, 1) · 0.25 =
    # 0.75; the same as Σ e² = 1 plus 2 e_i e_j per shared question: +0.5 (a), -0.5 (b), +0.5 (c).
    assert mean_variance(incidence(SHARING), e) == pytest.approx(1.5 / 16, abs=1e-15)
    # A question named twice by one item counts once.
    assert mean_variance(incidence([["a", "b", "a"], ["b", "c"], ["c"], ["d", "a"]]), e) == pytest.approx(1.5 / 16)


def test_a_negative_bracket_falls_back_to_the_iid_variance():
    # Two items on the same two questions, opposite residuals: Σ S² = 0, less 2 · 0.25 own terms.
    assert mean_variance(incidence([["a", "b"], ["a", "b"]]), np.array([0.5, -0.5])) == pytest.approx(0.5 / 4)


def test_paired_intervals_on_the_hand_made_pattern():
    correct = np.array([[1, 0, 0, 1], [1, 1, 0, 0]])
    cost = np.array([[2.0, 1.0, 1.0, 2.0], [1.0, 1.0, 1.0, 1.0]])
    run, reference = paired_cluster_robust(correct, cost, 1, clusters=SHARING)
    # Run 0: accuracy 0.5 with variance 1.5/16, ±0.60 clipped to [0, 1].
    assert run.accuracy_ci95 == [0.0, 1.0]
    # d = (0, -1, 0, 1): S = (a 1, b -1, c -1, d 1), Σ S² = 4, less own terms 0 + 1 + 1: variance 2/16.
    assert run.accuracy_diff == 0.0
    assert run.accuracy_diff_ci95 == pytest.approx([-Z * math.sqrt(2 / 16), Z * math.sqrt(2 / 16)])
    # R = 6/4; e = (a - R b) / b̄ = (0.5, -0.5, -0.5, 0.5): variance 1.5/16, taken on log R.
    spread = Z * math.sqrt(1.5 / 16) / 1.5
    assert run.cost_ratio == 1.5
    assert run.cost_ratio_ci95 == pytest.approx([1.5 * math.exp(-spread), 1.5 * math.exp(spread)])
    assert run.cost_ratio_ci95 == pytest.approx([1.00540, 2.23791], abs=1e-5)
    # The reference: e = (0.5, 0.5, -0.5, -0.5), S = (a 0, b 1, c 0, d -0.5), 1.25 - 0.75 own terms: 0.5/16.
    assert reference.accuracy_ci95 == pytest.approx([0.5 - Z * math.sqrt(0.5 / 16), 0.5 + Z * math.sqrt(0.5 / 16)])
    assert (reference.accuracy_diff, reference.accuracy_diff_ci95) == (0.0, [0.0, 0.0])
    assert (reference.cost_ratio, reference.cost_ratio_ci95) == (1.0, [1.0, 1.0])


def test_the_cost_ratio_interval_stays_positive_and_inverts_with_the_pair():
    rng = np.random.default_rng(11)
    clusters = [[f"q{q}" for q in rng.choice(20, 3, replace=False)] for _ in range(30)]
    cost = rng.lognormal(0, 1, (2, 30)) * np.array([[3.0], [1.0]])
    correct = np.zeros((2, 30))
    forward = paired_cluster_robust(correct, cost, 1, clusters=clusters)[0]
    backward = paired_cluster_robust(correct, cost, 0, clusters=clusters)[1]
    assert forward.cost_ratio == pytest.approx(1 / backward.cost_ratio)
    assert forward.cost_ratio_ci95 == pytest.approx([1 / backward.cost_ratio_ci95[1], 1 / backward.cost_ratio_ci95[0]])
    assert 0 < forward.cost_ratio_ci95[0] < forward.cost_ratio < forward.cost_ratio_ci95[1]
    free = paired_cluster_robust(correct, np.array([np.zeros(30), cost[1]]), 1, clusters=clusters)[0]
    assert (free.cost_ratio, free.cost_ratio_ci95) == (0.0, [0.0, 0.0])
    unpaid = paired_cluster_robust(correct, np.array([cost[0], np.zeros(30)]), 1, clusters=clusters)[0]
    assert (unpaid.cost_ratio, unpaid.cost_ratio_ci95) == (None, None)


def test_one_question_per_item_gives_the_iid_normal_interval():
    right = np.arange(40) % 4 > 0  # 30 of 40
    pair = paired_cluster_robust(np.array([right]), np.ones((1, 40)), clusters=[[i] for i in range(40)])[0]
    half = Z * math.sqrt(0.75 * 0.25 / 40)
    assert pair.accuracy_ci95 == pytest.approx([0.75 - half, 0.75 + half])


def _draw(rng: np.random.Generator, difficulty: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """100 composites of 3 distinct questions out of 86 drawn from the population, each right when all three
    of the model's answers are (a question answered right is right in every composite that uses it)."""
    questions = rng.choice(len(difficulty), 86, replace=False)
    right = rng.random(86) < difficulty[questions]
    groups = np.argsort(rng.random((100, 86)), axis=1)[:, :3]
    return groups, right[groups].all(axis=1).astype(float)


def test_the_estimate_matches_the_simulated_spread_where_the_per_item_one_falls_short():
    rng = np.random.default_rng(0)
    difficulty = rng.beta(1.2, 1.0, 5000)
    true_sd = float(np.std([_draw(rng, difficulty)[1].mean() for _ in range(2000)]))
    robust, per_item = [], []
    for _ in range(300):
        groups, y = _draw(rng, difficulty)
        e = y - y.mean()
        robust.append(math.sqrt(mean_variance(incidence(groups.tolist()), e)))
        per_item.append(math.sqrt(e @ e) / len(y))
    # Seeded: true sd 0.060, the estimate 0.057 on average (0.95 of it), the per-item one 0.036 (0.61).
    assert 0.75 < np.mean(robust) / true_sd < 1.25
    assert np.mean(per_item) / true_sd < 0.7


def _composites(questions: int, items: int, size: int, seed: int) -> list[list[int]]:
    """`items` composites of `size` distinct questions, dealt as the synthesis deals them."""
    return draw_groups(questions, size, items, random.Random(seed))


def test_composites_of_shared_questions_get_wider_intervals_than_composites_alone():
    """100 composites of three questions out of 40, right when all three of a model's answers are: a
    question's difficulty reaches every composite it is in, and the per-item bootstrap misses it."""
    groups = _composites(40, 100, 3, seed=1)
    rng = np.random.default_rng(2)
    knows = rng.random((2, 40)) < np.array([[0.85], [0.7]])  # which questions each of two models answers right
    correct = np.array([[all(model[q] for q in group) for group in groups] for model in knows], dtype=float)
    cost = np.ones((2, 100))
    clusters = [[f"q{q}" for q in group] for group in groups]
    plain = paired_bootstrap(correct, cost, 1, resamples=2000, seed=3)
    robust = paired_cluster_robust(correct, cost, 1, clusters=clusters)
    assert correct.mean(axis=1).tolist() == pytest.approx([0.68, 0.38])
    assert plain[0].accuracy_ci95 == pytest.approx([0.59, 0.77])
    assert plain[0].accuracy_diff_ci95 == pytest.approx([0.17, 0.42])
    assert robust[0].accuracy_ci95 == pytest.approx([0.4401593425530149, 0.9198406574469852])
    assert robust[0].accuracy_diff_ci95 == pytest.approx([-0.004268232943776595, 0.6042682329437767])
    assert _width(robust[0].accuracy_ci95) > 2 * _width(plain[0].accuracy_ci95)
    assert _width(robust[0].accuracy_diff_ci95) > 2 * _width(plain[0].accuracy_diff_ci95)
    # Identical runs still differ by exactly nothing.
    same = paired_cluster_robust(np.array([correct[0], correct[0]]), cost, clusters=clusters)
    assert same[1].accuracy_diff_ci95 == [0.0, 0.0] and same[1].cost_ratio_ci95 == [1.0, 1.0]


def test_items_without_a_question_or_of_another_number_are_refused():
    with pytest.raises(ValueError, match="item 1 belongs to no cluster"):
        incidence([["a"], []])
    with pytest.raises(ValueError, match="2 cluster lists for 3 items"):
        paired_cluster_robust(np.ones((1, 3)), np.ones((1, 3)), clusters=[["a"], ["b"]])


def _problem(item: str, sources: list[str]) -> Problem:
    return Problem(item, "question", "42", meta={"step_question_ids": {str(i): s for i, s in enumerate(sources)}})


def test_cluster_robust_only_where_a_source_question_is_shared():
    shared = {"c0": _problem("c0", ["q1", "q2", "q1"]), "c1": _problem("c1", ["q2", "q3"])}
    assert shared["c0"].source_ids() == ("q1", "q2")
    plan = resampling(shared, ["c0", "c1"])
    assert (plan.method, plan.clusters, plan.source_questions) == (CLUSTER_METHOD, [("q1", "q2"), ("q2", "q3")], 3)
    disjoint = {"c0": _problem("c0", ["q1", "q2"]), "c1": _problem("c1", ["q3", "q4"])}
    assert (resampling(disjoint, ["c0", "c1"]).method, resampling(disjoint, ["c0", "c1"]).clusters) == (
        NOTHING_SHARED, None)
    assert resampling(None, ["c0"]).method == NO_SOURCE_IDS
    assert resampling({"c0": Problem("c0", "question", "42")}, ["c0"]).method == NO_SOURCE_IDS
    assert resampling(shared, ["c0", "c9"]).method == NO_SOURCE_IDS


def _shared_runs(tmp_path, dataset: str = "fixture"):
    """Two runs over 30 composites of 3 questions out of 12, their items' sources, and their outcomes."""
    groups = _composites(12, 30, 3, seed=5)
    knows = np.random.default_rng(6).random(12) < 0.7
    flags = [all(knows[q] for q in group) for group in groups]
    problems = {f"q{i}": _problem(f"q{i}", [f"s{q}" for q in group]) for i, group in enumerate(groups)}
    a = write_run(tmp_path / "a", [result_row(f"q{i}", flag, 0.01 + 0.01 * (i % 4)) for i, flag in enumerate(flags)],
                  method="single:x", dataset=dataset)
    b = write_run(tmp_path / "b", [result_row(f"q{i}", True) for i in range(30)], dataset=dataset)
    return a, b, groups, problems, flags


def _arrays(flags: list[bool]) -> tuple[np.ndarray, np.ndarray]:
    """The two runs of `_shared_runs` as correct and cost arrays, items in id order (q0, q1, q10, ...)."""
    order = sorted(range(30), key=lambda i: f"q{i}")
    correct = np.array([[float(flags[i]) for i in order], [1.0] * 30])
    cost = np.array([[0.01 + 0.01 * (i % 4) for i in order], [0.01] * 30])
    return correct, cost


def test_compare_is_cluster_robust_when_the_items_share_source_questions(tmp_path):
    a, b, groups, problems, flags = _shared_runs(tmp_path)
    runs = [load_run(a), load_run(b)]
    robust = compare_runs(runs, resamples=500, problems=problems)
    plain = compare_runs(runs, resamples=500)  # the fixture's dataset does not load: item by item
    assert robust.interval_method == CLUSTER_METHOD and robust.source_questions == 12
    assert plain.interval_method == NO_SOURCE_IDS and plain.source_questions is None
    correct, cost = _arrays(flags)
    expected = paired_cluster_robust(correct, cost, clusters=[problems[i].meta["step_question_ids"].values()
                                                              for i in sorted(problems)])
    first = robust.runs[0]
    assert first.vs_reference == expected[0]
    assert first.accuracy_ci95 == expected[0].accuracy_ci95  # the run's own, from the same variance
    assert plain.runs[0].accuracy_ci95 == pytest.approx(wilson_interval(sum(flags), 30))
    assert _width(first.accuracy_ci95) > _width(plain.runs[0].accuracy_ci95)
    assert robust.intervals_text() == f"{CLUSTER_METHOD}, normal ±1.96 standard errors"
    assert plain.intervals_text() == f"paired {NO_SOURCE_IDS} (500 resamples, seed 0)"
    # Only the items asked for.
    some = compare_runs(runs, resamples=200, problems=problems, items=["q3", "q1", "q2", "nope"])
    assert some.shared_items == 3 and some.runs[0].n == 3


def _dataset(path, groups: list[list[int]]) -> str:
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": "composite", "answer": "42",
                                        "meta": {"step_question_ids": {str(s): f"s{q}" for s, q in enumerate(group)}}})
                            + "\n" for i, group in enumerate(groups)), encoding="utf-8")
    return str(path)


def test_benchmark_rows_carry_the_cluster_robust_intervals(tmp_path):
    groups = _composites(12, 30, 3, seed=5)
    a, b, _, problems, flags = _shared_runs(tmp_path, _dataset(tmp_path / "composites.jsonl", groups))
    chosen = [("x", load_run(a).summary), ("best single", load_run(b).summary)]
    rows = benchmark_rows(tmp_path, chosen, 1, [], best_single=False)
    correct, cost = _arrays(flags)
    expected = paired_cluster_robust(correct, cost, 1, clusters=[problems[i].meta["step_question_ids"].values()
                                                                 for i in sorted(problems)])[0]
    row = rows[0]
    assert row["interval_method"] == CLUSTER_METHOD
    assert row["accuracy_ci95"] == expected.accuracy_ci95
    assert row["diff_vs_best_single_ci95"] == expected.accuracy_diff_ci95
    assert row["cost_vs_best_single_ci95"] == expected.cost_ratio_ci95


def test_reso_compare_says_its_intervals_are_cluster_robust(tmp_path):
    from typer.testing import CliRunner

    from reso.evals.cli import app

    groups = _composites(12, 30, 3, seed=5)
    dataset = _dataset(tmp_path / "composites.jsonl", groups)
    a = write_run(tmp_path / "a", [result_row(f"q{i}", i % 3 > 0) for i in range(30)], method="single:x",
                  dataset=dataset)
    b = write_run(tmp_path / "b", [result_row(f"q{i}", True) for i in range(30)], dataset=dataset)
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--json", "--resamples", "300"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["interval_method"] == CLUSTER_METHOD and report["source_questions"] == 12
    table = CliRunner().invoke(app, ["compare", str(a), str(b), "--resamples", "300"], env={"COLUMNS": "200"})
    caption = " ".join(table.output.split())
    assert f"{CLUSTER_METHOD}: 12 source questions" in caption and "±1.96 standard errors" in caption
    assert "resamples" not in caption
