"""The cost penalty's scales: linear (a share of the dearest candidate's cost), log (the price ratio to the
cheapest priced candidate against the dearest's) and absolute (against a fixed USD reference), against
hand-computed values, from the score up to `reso eval --cost-scale`."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.agents.selection.config import CostScale, SelectorConfig
from reso.agents.selection.scoring import score_components
from reso.evals.cli import app
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import build_team

RELATIVE = (CostScale.LINEAR, CostScale.LOG)


def _penalties(prior_cost: list[float], scale: CostScale, **config: float) -> np.ndarray:
    """The cost penalties of never-visited candidates whose expected cost is their list-price call."""
    m = len(prior_cost)
    parts = score_components(np.full(m, 0.5), np.zeros(m), np.zeros(m), np.zeros(m), np.array(prior_cost), 0.0,
                             SelectorConfig(cost_scale=scale, exploration_c=0.0, **config))
    return parts["cost_penalty"]


def test_the_log_scale_places_each_price_between_the_cheapest_and_the_dearest() -> None:
    penalties = _penalties([0.0, 0.001, 0.01, 0.1], CostScale.LOG)
    assert penalties == pytest.approx([0.0, math.log(2) / math.log(101), math.log(11) / math.log(101), 1.0])
    assert _penalties([0.0, 0.001, 0.01, 0.1], CostScale.LINEAR) == pytest.approx([0.0, 0.01, 0.1, 1.0])


def test_cost_weight_and_cost_ref_apply_on_the_log_scale() -> None:
    assert _penalties([0.001, 0.01], CostScale.LOG, cost_weight=3.0) == pytest.approx(
        [3 * math.log(2) / math.log(11), 3.0])
    # An absolute reference dearer than every candidate takes the dearest's place.
    assert _penalties([0.001, 0.01], CostScale.LOG, cost_ref_usd=0.1) == pytest.approx(
        [math.log(2) / math.log(101), math.log(11) / math.log(101)])


def test_candidates_at_one_price_pay_the_full_penalty_on_either_scale() -> None:
    for scale in RELATIVE:
        assert _penalties([0.002, 0.002], scale) == pytest.approx([1.0, 1.0])
        assert _penalties([0.0, 0.0], scale).tolist() == [0.0, 0.0]


def test_an_outlier_at_the_top_shrinks_a_mid_priced_candidate_far_less_on_the_log_scale() -> None:
    # A cheap model, a mid-priced one at ten times its price, and then a dear outlier joins at 1,000 times.
    without = {scale: _penalties([0.0003, 0.003], scale)[0:2] for scale in RELATIVE}
    with_outlier = {scale: _penalties([0.0003, 0.003, 0.3], scale)[0:2] for scale in RELATIVE}
    linear_shrink = with_outlier[CostScale.LINEAR][1] / without[CostScale.LINEAR][1]
    log_shrink = with_outlier[CostScale.LOG][1] / without[CostScale.LOG][1]
    assert linear_shrink == pytest.approx(0.01)
    assert log_shrink == pytest.approx(math.log(11) / math.log(1001))
    # The price gap between the cheap and the mid-priced model is what ranks them: the linear scale all but
    # erases it next to the outlier (0.009 of the penalty), the log scale keeps a third of it.
    gap = {scale: with_outlier[scale][1] - with_outlier[scale][0] for scale in RELATIVE}
    assert gap[CostScale.LINEAR] == pytest.approx(0.009)
    assert gap[CostScale.LOG] == pytest.approx((math.log(11) - math.log(2)) / math.log(1001))
    assert gap[CostScale.LOG] > 0.24


def test_the_log_scale_changes_who_ranks_first_beside_a_dear_outlier() -> None:
    # b is a little more reliable than a at ten times a's price; c is a dear outlier of poor record.
    config = {"w_sim": 0.0, "gate_threshold": -1.0, "exploration_c": 0.0}
    visits, rewards = np.array([100.0, 100.0, 100.0]), np.array([90.0, 93.0, 50.0])
    costs = np.array([0.0003, 0.003, 0.3]) * 101  # a hundred calls at those prices plus the prior's one
    firsts = {}
    for scale in RELATIVE:
        parts = score_components(np.zeros(3), visits, rewards, costs, np.array([0.0003, 0.003, 0.3]), 300.0,
                                 SelectorConfig(cost_scale=scale, **config))
        firsts[scale] = "abc"[int(np.argmax(parts["score"]))]
    assert firsts == {CostScale.LINEAR: "b", CostScale.LOG: "a"}


def test_unknown_cost_scales_are_refused_and_the_setting_reaches_the_selector() -> None:
    with pytest.raises(ValueError, match="cost_scale must be one of linear, log, absolute, got 'cubic'"):
        SelectorConfig(cost_scale="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown cost_scale 'cubic'; choose one of linear, log, absolute"):
        ReSoSettings(cost_scale="cubic")  # type: ignore[arg-type]
    assert build_team(ReSoSettings(embedder="hash:64")).selector.config.cost_scale == CostScale.LINEAR
    assert build_team(ReSoSettings(embedder="hash:64", cost_scale="log")).selector.config.cost_scale == CostScale.LOG


@pytest.mark.parametrize("scale", RELATIVE)
def test_reso_eval_scores_on_the_cost_scale_it_is_given(tmp_path, scale: CostScale) -> None:
    out = tmp_path / scale
    result = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-mas-easy-test", "--limit", "2", "--out", str(out),
                                      "--quiet", "--cost-scale", scale])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "summary.json").read_text())["settings"]["cost_scale"] == scale
    pairs = [step["candidates"] for line in (out / "results.jsonl").read_text().splitlines()
             for step in json.loads(line)["steps"] if len(step["candidates"]) == 2]
    assert pairs
    for pair in pairs:
        # The two models of the embedded pool, never asked before: each expects its list-price call, and the
        # dearer is the dearest candidate (the calculator, also retrieved, is free).
        cheap, dear = sorted((c["selection"] for c in pair), key=lambda parts: parts["mean_cost"])
        ratio = dear["mean_cost"] / cheap["mean_cost"]
        assert ratio > 1 and dear["cost_penalty"] == pytest.approx(1.0)
        expected = math.log(2) / math.log1p(ratio) if scale == CostScale.LOG else 1 / ratio
        assert cheap["cost_penalty"] == pytest.approx(expected)


def test_the_absolute_scale_charges_each_price_against_the_reference_alone() -> None:
    assert _penalties([0.0, 0.001, 0.01, 0.1], CostScale.ABSOLUTE, cost_ref_usd=0.01) == pytest.approx(
        [0.0, 0.1, 1.0, 10.0])
    assert _penalties([0.001, 0.004], CostScale.ABSOLUTE, cost_ref_usd=0.002, cost_weight=0.5) == pytest.approx(
        [0.25, 1.0])


def test_on_the_absolute_scale_a_model_added_to_the_pool_changes_no_other_models_penalty() -> None:
    # The outlier that makes every other model nearly free on the linear scale changes nothing here, so the
    # cheap model keeps its lead over the mid-priced one (b: 0.93 at ten times a's price of a 0.90 model).
    config = {"w_sim": 0.0, "gate_threshold": -1.0, "exploration_c": 0.0, "cost_ref_usd": 0.002}
    prices = np.array([0.0003, 0.003, 0.3])

    def scored(m: int, scale: CostScale) -> tuple[np.ndarray, str]:
        visits, rewards = np.full(m, 100.0), np.array([90.0, 93.0, 50.0])[:m]
        parts = score_components(np.zeros(m), visits, rewards, prices[:m] * 101, prices[:m], 100.0 * m,
                                 SelectorConfig(cost_scale=scale, **config))
        return parts["cost_penalty"], "abc"[int(np.argmax(parts["score"]))]

    (before, first_before), (after, first_after) = scored(2, CostScale.ABSOLUTE), scored(3, CostScale.ABSOLUTE)
    assert after[:2] == pytest.approx(before) and first_before == first_after == "a"
    # The linear scale with the same floor (cost_ref_usd 0.002 under the dearest) turns to b once c joins.
    assert scored(2, CostScale.LINEAR)[1] == "a" and scored(3, CostScale.LINEAR)[1] == "b"


def test_the_absolute_scale_needs_a_reference() -> None:
    with pytest.raises(ValueError, match="cost_scale 'absolute' needs cost_ref_usd > 0"):
        SelectorConfig(cost_scale="absolute")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="> 0 with cost_scale absolute"):
        ReSoSettings(cost_scale="absolute")  # type: ignore[arg-type]
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="cost_ref_usd must be a finite USD amount"):
            ReSoSettings(cost_ref_usd=bad)
    with pytest.raises(ValueError, match="needs cost_ref_usd > 0"):
        SelectorConfig(cost_scale="absolute", cost_ref_usd=math.inf)  # type: ignore[arg-type]
    team = build_team(ReSoSettings(embedder="hash:64", cost_scale="absolute", cost_ref_usd=0.01))
    assert team.selector.config.cost_scale == CostScale.ABSOLUTE and team.selector.config.cost_ref_usd == 0.01


def test_reso_eval_scores_on_the_absolute_scale_against_its_reference(tmp_path) -> None:
    out = tmp_path / "absolute"
    result = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-mas-easy-test", "--limit", "2", "--out", str(out),
                                      "--quiet", "--cost-scale", "absolute", "--cost-ref-usd", "0.001"])
    assert result.exit_code == 0, result.output
    settings = json.loads((out / "summary.json").read_text())["settings"]
    assert settings["cost_scale"] == "absolute" and settings["cost_ref_usd"] == 0.001
    candidates = [c["selection"] for line in (out / "results.jsonl").read_text().splitlines()
                  for step in json.loads(line)["steps"] for c in step["candidates"]]
    priced = [parts for parts in candidates if parts.get("mean_cost", 0.0) > 0]
    assert priced and any(parts["cost_penalty"] > 1.0 for parts in priced)  # a call dearer than the reference
    for parts in priced:
        assert parts["cost_penalty"] == pytest.approx(parts["mean_cost"] / 0.001)
    refused = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-mas-easy-test", "--limit", "1", "--quiet",
                                       "--out", str(tmp_path / "refused"), "--cost-scale", "absolute"])
    assert refused.exit_code != 0 and "> 0 with cost_scale absolute" in refused.output
