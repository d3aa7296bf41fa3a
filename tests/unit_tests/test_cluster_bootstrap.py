"""The cluster bootstrap by source question: draw for draw the plain bootstrap when every item is its own
cluster, wider when items share clusters (composites of shared questions), and how a comparison decides
between the two from the dataset's source question ids."""

from __future__ import annotations

import json

import numpy as np
import pytest

from reso.evals.datasets import Problem
from reso.evals.reports.clusters import CLUSTER_METHOD, NO_SOURCE_IDS, NOTHING_SHARED, resampling, source_ids
from reso.evals.reports.compare import compare_runs, load_run
from reso.evals.reports.stats import membership, paired_bootstrap, wilson_interval
from tests.run_fixtures import result_row, write_run


def _width(interval: list[float] | None) -> float:
    assert interval is not None
    return interval[1] - interval[0]


def test_one_cluster_per_item_resamples_exactly_as_the_plain_bootstrap():
    rng = np.random.default_rng(4)
    correct = rng.random((3, 57)) < np.array([[0.8], [0.6], [0.4]])
    cost = rng.random((3, 57))
    plain = paired_bootstrap(correct, cost, 1, resamples=700, seed=9)
    clustered = paired_bootstrap(correct, cost, 1, clusters=[[f"q{i}"] for i in range(57)], resamples=700, seed=9)
    for a, b in zip(plain, clustered, strict=True):
        assert a.accuracy_diff == b.accuracy_diff
        assert a.accuracy_diff_ci95 == b.accuracy_diff_ci95
        assert a.accuracy_ci95 == b.accuracy_ci95
        assert a.cost_ratio_ci95 == pytest.approx(b.cost_ratio_ci95, rel=1e-12)  # sums in another order


def test_items_that_move_together_in_clusters_of_four_double_the_interval():
    """160 items in 40 clusters of four identical outcomes: 40 independent units, not 160, so the interval
    is about twice as wide (sqrt 4)."""
    right = np.repeat(np.arange(40) % 2 == 0, 4)
    correct = np.array([right, right])
    clusters = [[f"q{i // 4}"] for i in range(160)]
    plain = paired_bootstrap(correct, np.ones((2, 160)), resamples=2000, seed=0)[0]
    clustered = paired_bootstrap(correct, np.ones((2, 160)), clusters=clusters, resamples=2000, seed=0)[0]
    assert plain.accuracy_ci95 == pytest.approx([0.41875, 0.575])
    assert clustered.accuracy_ci95 == pytest.approx([0.35, 0.65])
    assert 1.7 < _width(clustered.accuracy_ci95) / _width(plain.accuracy_ci95) < 2.3


def _composites(questions: int, items: int, size: int, seed: int) -> list[list[int]]:
    """`items` composites of `size` distinct questions, dealt from reshuffled decks like the synthesis."""
    rng = np.random.default_rng(seed)
    deck: list[int] = []
    groups = []
    for _ in range(items):
        group: list[int] = []
        while len(group) < size:
            if not deck:
                deck = list(rng.permutation(questions))
            card = int(deck.pop())
            if card in group:
                deck.insert(0, card)
                continue
            group.append(card)
        groups.append(group)
    return groups


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
    clustered = paired_bootstrap(correct, cost, 1, clusters=clusters, resamples=2000, seed=3)
    assert correct.mean(axis=1).tolist() == pytest.approx([0.67, 0.36])
    assert plain[0].accuracy_ci95 == pytest.approx([0.57, 0.76])
    assert plain[0].accuracy_diff_ci95 == pytest.approx([0.19, 0.42])
    assert clustered[0].accuracy_ci95 == pytest.approx([0.3302949355971898, 0.951632104454685])
    assert clustered[0].accuracy_diff_ci95 == pytest.approx([-0.0740817263544536, 0.682564798071127])
    assert _width(clustered[0].accuracy_ci95) > 2 * _width(plain[0].accuracy_ci95)
    assert _width(clustered[0].accuracy_diff_ci95) > 2 * _width(plain[0].accuracy_diff_ci95)
    # Identical runs still differ by exactly nothing.
    same = paired_bootstrap(np.array([correct[0], correct[0]]), cost, clusters=clusters, resamples=500)
    assert same[1].accuracy_diff_ci95 == [0.0, 0.0] and same[1].cost_ratio_ci95 == pytest.approx([1.0, 1.0])


def test_membership_pads_with_a_cluster_that_always_counts_once():
    table, count = membership([["a", "b", "a"], ["c"], ["b", "c"]])
    assert count == 3
    assert table.tolist() == [[0, 1], [2, 3], [1, 2]]
    with pytest.raises(ValueError, match="item 1 belongs to no cluster"):
        membership([["a"], []])
    with pytest.raises(ValueError, match="2 cluster lists for 3 items"):
        paired_bootstrap(np.ones((1, 3)), np.ones((1, 3)), clusters=[["a"], ["b"]])


def _problem(item: str, sources: list[str]) -> Problem:
    return Problem(item, "question", "42", meta={"step_question_ids": {str(i): s for i, s in enumerate(sources)}})


def test_resampling_by_source_question_only_where_one_is_shared():
    shared = {"c0": _problem("c0", ["q1", "q2", "q1"]), "c1": _problem("c1", ["q2", "q3"])}
    assert source_ids(shared["c0"]) == ("q1", "q2")
    plan = resampling(shared, ["c0", "c1"])
    assert (plan.method, plan.clusters, plan.source_questions) == (CLUSTER_METHOD, [("q1", "q2"), ("q2", "q3")], 3)
    disjoint = {"c0": _problem("c0", ["q1", "q2"]), "c1": _problem("c1", ["q3", "q4"])}
    assert resampling(disjoint, ["c0", "c1"]) == resampling(disjoint, ["c0", "c1"])
    assert (resampling(disjoint, ["c0", "c1"]).method, resampling(disjoint, ["c0", "c1"]).clusters) == (
        NOTHING_SHARED, None)
    assert resampling(None, ["c0"]).method == NO_SOURCE_IDS
    assert resampling({"c0": Problem("c0", "question", "42")}, ["c0"]).method == NO_SOURCE_IDS
    assert resampling(shared, ["c0", "c9"]).method == NO_SOURCE_IDS


def test_compare_resamples_by_source_question_when_the_items_share_them(tmp_path):
    groups = _composites(12, 30, 3, seed=5)
    knows = np.random.default_rng(6).random(12) < 0.7
    flags = [all(knows[q] for q in group) for group in groups]
    problems = {f"q{i}": _problem(f"q{i}", [f"s{q}" for q in group]) for i, group in enumerate(groups)}
    a = write_run(tmp_path / "a", [result_row(f"q{i}", flag) for i, flag in enumerate(flags)], method="single:x")
    b = write_run(tmp_path / "b", [result_row(f"q{i}", True) for i in range(30)])
    runs = [load_run(a), load_run(b)]
    clustered = compare_runs(runs, resamples=500, problems=problems)
    plain = compare_runs(runs, resamples=500)  # the fixture's dataset does not load: item by item
    assert clustered.interval_method == CLUSTER_METHOD and clustered.source_questions == 12
    assert plain.interval_method == NO_SOURCE_IDS and plain.source_questions is None
    first = clustered.runs[0]
    assert first.accuracy_ci95 == first.vs_reference.accuracy_ci95  # the run's own, from the same resamples
    assert plain.runs[0].accuracy_ci95 == pytest.approx(wilson_interval(sum(flags), 30))
    assert _width(first.accuracy_ci95) > _width(plain.runs[0].accuracy_ci95)
    assert clustered.to_json()["interval_method"] == CLUSTER_METHOD
    # Only the items asked for.
    some = compare_runs(runs, resamples=200, problems=problems, items=["q3", "q1", "q2", "nope"])
    assert some.shared_items == 3 and some.runs[0].n == 3


def test_reso_compare_says_it_resampled_source_questions(tmp_path):
    from typer.testing import CliRunner

    from reso.evals.cli import app

    groups = _composites(12, 30, 3, seed=5)
    dataset = tmp_path / "composites.jsonl"
    dataset.write_text("".join(json.dumps({"id": f"q{i}", "question": "composite", "answer": "42",
                                           "meta": {"step_question_ids": {str(s): f"s{q}" for s, q in enumerate(group)}}})
                               + "\n" for i, group in enumerate(groups)), encoding="utf-8")
    a = write_run(tmp_path / "a", [result_row(f"q{i}", i % 3 > 0) for i in range(30)], method="single:x",
                  dataset=str(dataset))
    b = write_run(tmp_path / "b", [result_row(f"q{i}", True) for i in range(30)], dataset=str(dataset))
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--json", "--resamples", "300"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["interval_method"] == CLUSTER_METHOD and report["source_questions"] == 12
    table = CliRunner().invoke(app, ["compare", str(a), str(b), "--resamples", "300"], env={"COLUMNS": "200"})
    assert f"{CLUSTER_METHOD} (12 source questions" in " ".join(table.output.split())
