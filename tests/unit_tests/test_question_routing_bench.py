"""`reso bench routing --question-skills`: a world where models' success depends on the question's topic, routed by
the pooled record, by question skills and by the true topic."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.evals.bench.question_routing import QuestionWorld, _route, run_question_routing
from reso.evals.cli import app


def test_the_world_prices_a_ladder_and_makes_the_cheap_models_uneven():
    world = QuestionWorld.draw(5, 8, np.random.default_rng(0))
    assert world.prices.tolist() == pytest.approx([0.0001 * 2**m for m in range(5)])
    means = world.chance.mean(axis=1)
    assert np.all(np.diff(means) > 0)  # the dearer, the better on average
    spread = world.chance.max(axis=1) - world.chance.min(axis=1)
    assert spread[0] > 3 * spread[-1]  # the cheapest varies most from topic to topic
    assert world.chance.min() >= 0.02 and world.chance.max() <= 0.98
    with pytest.raises(ValueError, match="at least two models and two topics"):
        QuestionWorld.draw(1, 8, np.random.default_rng(0))


def test_a_router_picks_the_most_chance_right_times_the_value_less_the_price():
    chance = np.array([[0.5, 0.9], [0.8, 0.9]])
    prices = np.array([0.0, 0.003])
    assert _route(chance, prices, 0.01).tolist() == [1, 0]  # 0.9 × 0.01 − 0.003 = 0.006 beats 0.005, not 0.008


def test_question_skills_recover_part_of_the_topic_oracles_advantage_over_the_pooled_record():
    report = run_question_routing(train=1000, test=1000, seed=1)
    assert report == run_question_routing(train=1000, test=1000, seed=1)  # one seed, one report
    assert len(report["rows"]) == 9 and report["rows"][0]["value_usd"] < report["rows"][-1]["value_usd"]
    for row in report["rows"]:
        # The pooled record is one number per model: every question goes to the same model.
        assert min(abs(row["pooled"]["cost_per_question_usd"] - price) for price in report["prices_usd"]) < 1e-12
    oracle = sum(row["topic oracle"]["net_value"] for row in report["rows"])
    pooled = sum(row["pooled"]["net_value"] for row in report["rows"])
    assert oracle > pooled and 0.2 < report["skills_share_of_oracle_advantage"] < 1.0


def test_the_bench_prints_its_table_and_its_json():
    runner = CliRunner()
    printed = runner.invoke(app, ["bench", "routing", "--question-skills", "--subtasks", "300"])
    assert printed.exit_code == 0, printed.output
    assert "topic oracle" in printed.output and "question skills recover" in printed.output
    as_json = runner.invoke(app, ["bench", "routing", "--question-skills", "--subtasks", "300", "--models", "3",
                                  "--topics", "4", "--json"])
    report = json.loads(as_json.output.strip().splitlines()[-1])
    assert (report["models"], report["topics"], report["test_questions"]) == (3, 4, 300)
