"""The budget knob in the coarse stage: a candidate's cost penalty is w_rep × its expected cost per call / the
value of a right answer, against hand-computed values, whoever else is a candidate; checked from the score up
to `reso eval --answer-value`."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.agents.dadb.sqlite import DADB
from reso.agents.selection.config import SelectorConfig
from reso.agents.selection.scoring import score_components
from reso.agents.selection.selector import ReputationSelector
from reso.evals.cli import app
from reso.graphs.settings import DEFAULT_ANSWER_VALUE_USD, ReSoSettings
from reso.graphs.team import build_team
from tests.selector_helpers import HASH, priced_pool


def _parts(prior_cost: list[float], value: float, *, rewards: list[float] | None = None,
           visits: list[float] | None = None) -> dict[str, np.ndarray]:
    """Every score term of candidates with `visits` (default none) whose calls all cost `prior_cost`, their
    list price."""
    m = len(prior_cost)
    n = np.array(visits or [0.0] * m)
    return score_components(np.full(m, 0.5), n, np.array(rewards or [0.0] * m), np.array(prior_cost) * n,
                            np.array(prior_cost), 10.0, SelectorConfig(exploration_c=0.0),
                            answer_value_usd=value)


def test_the_penalty_is_the_price_in_units_of_the_answers_value() -> None:
    # w_rep 2: a call costing a tenth of the value pays 0.2, as much as 10 points of record are worth.
    assert _parts([0.0, 0.001, 0.01, 0.1], 0.1)["cost_penalty"] == pytest.approx([0.0, 0.02, 0.2, 2.0])
    assert _parts([0.001, 0.01], math.inf)["cost_penalty"].tolist() == [0.0, 0.0]


def test_a_model_added_to_the_pool_changes_no_other_penalty_or_ranking() -> None:
    # A cheap model right 6 times in 10, a dear one 9 times in 10 (reputation (r + 1) / (n + 2)).
    before = _parts([0.0004, 0.004], 0.01, rewards=[6, 9], visits=[10, 10])
    after = _parts([0.0004, 0.004, 0.4], 0.01, rewards=[6, 9, 10], visits=[10, 10, 10])
    assert after["cost_penalty"][:2] == pytest.approx(before["cost_penalty"])
    assert after["score"][:2] == pytest.approx(before["score"])


def test_the_value_decides_whether_reliability_is_worth_its_price() -> None:
    # Posterior means 7/12 and 10/12; the dear model's edge of 0.25 of a right answer is worth its extra
    # 0.0036 per call only when the answer is worth more than 0.0036 / 0.25 = 0.0144.
    cheap_first = _parts([0.0004, 0.004], 0.01, rewards=[6, 9], visits=[10, 10])["score"]
    dear_first = _parts([0.0004, 0.004], 0.02, rewards=[6, 9], visits=[10, 10])["score"]
    assert cheap_first[0] > cheap_first[1] and dear_first[1] > dear_first[0]
    net = [2 * (7 / 12 - 0.0004 / 0.01), 2 * (10 / 12 - 0.004 / 0.01)]
    parts = _parts([0.0004, 0.004], 0.01, rewards=[6, 9], visits=[10, 10])
    assert (parts["s_rep"] - parts["cost_penalty"]) == pytest.approx(net)


def test_the_value_must_be_a_positive_amount_and_reaches_the_selector() -> None:
    assert ReSoSettings().answer_value_usd == DEFAULT_ANSWER_VALUE_USD == 0.05
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="answer_value_usd must be a USD amount > 0"):
            ReSoSettings(answer_value_usd=bad)
        with pytest.raises(ValueError, match="answer_value_usd must be a USD amount > 0"):
            ReputationSelector(priced_pool({"a": 1.0}), DADB(), HASH, answer_value_usd=bad)
    team = build_team(ReSoSettings().replace({"selection.embedder": "hash:64"}, answer_value_usd=0.003))
    assert team.selector.answer_value_usd == 0.003  # type: ignore[attr-defined]
    assert ReSoSettings(answer_value_usd=math.inf).answer_value_usd == math.inf


def test_reso_eval_prices_every_candidate_against_its_answer_value(tmp_path) -> None:
    out = tmp_path / "priced"
    result = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-mas-easy-test", "--limit", "2", "--out", str(out),
                                      "--quiet", "--answer-value", "0.001"])
    assert result.exit_code == 0, result.output
    settings = json.loads((out / "summary.json").read_text())["settings"]
    assert settings["answer_value_usd"] == 0.001 and settings["asking.rule"] == "priced"
    candidates = [c["selection"] for line in (out / "results.jsonl").read_text().splitlines()
                  for step in json.loads(line)["steps"] for c in step["candidates"]]
    priced = [parts for parts in candidates if parts.get("mean_cost", 0.0) > 0]
    assert priced
    for parts in priced:
        assert parts["cost_penalty"] == pytest.approx(2.0 * parts["mean_cost"] / 0.001)
    refused = CliRunner().invoke(app, ["eval", "--dataset", "gsm8k-mas-easy-test", "--limit", "1", "--quiet",
                                       "--out", str(tmp_path / "refused"), "--answer-value", "0"])
    assert refused.exit_code == 2 and "answer_value_usd must be a USD amount > 0" in refused.output
