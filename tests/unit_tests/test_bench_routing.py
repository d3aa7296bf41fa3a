"""`reso bench routing`: probability files, JSON output with the keys, the plot, and learning that shows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.evals.bench.routing import Arms, load_arms, simulate
from reso.evals.cli import app


def test_cli_prints_json_last_and_saves_the_plot(tmp_path) -> None:
    plot = tmp_path / "regret.png"
    result = CliRunner().invoke(app, ["bench", "routing", "--subtasks", "200", "--agents", "8", "--seed", "2",
                                      "--plot", str(plot), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["subtasks"] == 200 and report["agents"] == 8
    assert set(report["policies"]) == {"ucb", "random", "greedy"}
    for summary in report["policies"].values():
        assert summary["regret"] >= 0 and 0 <= summary["best_pick_rate"] <= 1
    assert plot.is_file() and plot.read_bytes()[:4] == b"\x89PNG"


def test_ucb_learns_a_clear_best_agent() -> None:
    probabilities = np.full((20, 1), 0.1)
    probabilities[13, 0] = 0.9
    arms = Arms([f"a{i}" for i in range(20)], [None], probabilities)
    outcome = simulate(arms, subtasks=600, seed=0)["policies"]
    assert outcome["ucb"]["regret"] < 0.25 * outcome["random"]["regret"]
    assert outcome["ucb"]["best_pick_rate"] > 0.7 and outcome["random"]["best_pick_rate"] < 0.15
    assert outcome["ucb"]["regret"] == pytest.approx(0.8 * 600 * (1 - outcome["ucb"]["best_pick_rate"]), abs=0.1)


def test_per_domain_files_route_each_domain_to_its_specialist(tmp_path) -> None:
    source = tmp_path / "probs.json"
    source.write_text(json.dumps({
        "algebra-expert": {"math": 0.9, "chem": 0.1},
        "chem-expert": {"math": 0.1, "chem": 0.9},
        **{f"weak{i}": {"math": 0.2, "chem": 0.2} for i in range(4)},
    }))
    arms = load_arms(source)
    assert arms.domains == ["chem", "math"] and arms.probabilities.shape == (6, 2)
    outcome = simulate(arms, subtasks=800, seed=1)["policies"]
    assert outcome["ucb"]["best_pick_rate"] > 0.8
    assert outcome["ucb"]["regret"] < 0.25 * outcome["random"]["regret"]


def test_csv_files_with_and_without_domains(tmp_path) -> None:
    flat = tmp_path / "flat.csv"
    flat.write_text("agent,probability\nx,0.25\ny,0.75\n")
    arms = load_arms(flat)
    assert arms.agent_ids == ["x", "y"] and arms.domains == [None]
    np.testing.assert_allclose(arms.probabilities[:, 0], [0.25, 0.75])
    by_domain = tmp_path / "domains.csv"
    by_domain.write_text("agent,domain,probability\nx,math,0.5\nx,chem,0.4\ny,math,0.3\ny,chem,0.6\n")
    assert load_arms(by_domain).probabilities.tolist() == [[0.4, 0.5], [0.6, 0.3]]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [("bad.csv", "agent,probability\nx,1.5\n", r"bad.csv:2: 'probability'"),
     ("cols.csv", "name,p\nx,0.5\n", "columns"),
     ("gap.json", '{"x": {"math": 0.5}, "y": {"chem": 0.5}}', "no probability for domain"),
     ("word.json", '{"x": "high"}', "field 'x'"),
     ("broken.json", '{"x": ', "invalid JSON")],
)
def test_bad_probability_files_name_the_problem(tmp_path, name, text, message) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_arms(path)
    result = CliRunner().invoke(app, ["bench", "routing", "--probs", str(path), "--json"])
    assert result.exit_code == 2 and "error:" in result.output


def test_several_seeds_report_means_worst_case_and_rows() -> None:
    result = CliRunner().invoke(app, ["bench", "routing", "--subtasks", "150", "--agents", "6", "--seeds", "0-1,5",
                                      "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["seeds"] == [0, 1, 5] and [row["seed"] for row in report["per_seed"]] == [0, 1, 5]
    ucb = report["policies"]["ucb"]
    per_seed = [row["policies"]["ucb"]["regret_vs_random"] for row in report["per_seed"]]
    assert ucb["regret_vs_random_worst"] == max(per_seed)
    assert ucb["regret_vs_random"] == pytest.approx(sum(per_seed) / 3, abs=1e-4)
    assert 0 <= report["target_met_seeds"] <= 3
    bad = CliRunner().invoke(app, ["bench", "routing", "--seeds", "a-b", "--json"])
    assert bad.exit_code == 2 and "--seeds" in bad.output
