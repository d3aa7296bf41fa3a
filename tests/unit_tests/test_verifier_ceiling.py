"""`reso bench ceiling`: a cascade of recorded runs with verifiers of known quality, on hand-made folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reso.evals.bench.synthetic_verifier import VerifierQualityError, measured_auc, synthetic_verifier
from reso.evals.bench.verifier_ceiling import CeilingError, run_ceiling_bench
from reso.evals.cli import app
from reso.evals.datasets import load_dataset
from tests.run_fixtures import write_run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "datasets" / "reso_mas_sample.json"
PRICE = {"cheap": 1.0, "strong": 10.0, "peer": 0.5}
INTEGRATION = 0.25
"""What each run paid for a composite's integration step."""


def _benchmark(tmp_path: Path, cheap_wrong: set[str]) -> tuple[Path, list]:
    """A benchmark folder of the three fixture composites: `cheap` wrong on the source questions
    `cheap_wrong`, `strong` right on all, `peer` agreeing with `cheap` on every question but the first it
    gets wrong; each call costs its model's PRICE, each integration step INTEGRATION. The rows' own verdicts
    are the opposite of the recordings' labels: the bench must grade by the labels alone."""
    folder = tmp_path / "bench"
    folder.mkdir()
    dataset = folder / "composites.json"
    shutil.copy(FIXTURE, dataset)
    problems = load_dataset(str(dataset))
    questions = sorted({qid for p in problems for qid in p.meta["step_question_ids"].values()})
    first_wrong = sorted(cheap_wrong)[0]
    lines = []
    for qid in questions:
        cheap_value = "1" if qid in cheap_wrong else "2"
        peer_value = "3" if qid == first_wrong else cheap_value
        responses = {"cheap": f"So \\boxed{{{cheap_value}}}", "strong": "So \\boxed{2}",
                     "peer": f"So \\boxed{{{peer_value}}}"}
        lines.append({"id": qid, "question": f"question {qid}", "answer": "2", "responses": responses,
                      "correct": {"cheap": qid not in cheap_wrong, "strong": True, "peer": peer_value == "2"}})
    recordings = folder / "recordings.jsonl"
    recordings.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    for model in PRICE:
        rows = []
        for problem in problems:
            named = problem.meta["step_question_ids"]
            wrong = {"cheap": cheap_wrong, "strong": set(), "peer": {first_wrong}}[model]
            right = not wrong & set(named.values())
            steps = [{"id": step, "agent": f"{model}/algebra", "value": "2", "status": "done", "depends_on": [],
                      "candidates": [{"agent_id": f"{model}/algebra", "model": f"replay:{recordings}#{model}",
                                      "cost_usd": PRICE[model]}]} for step in named]
            steps.append({"id": "final", "agent": "tool/calculator", "value": "2", "status": "done",
                          "depends_on": list(named), "candidates": [{"agent_id": "tool/calculator",
                                                                     "cost_usd": INTEGRATION}]})
            rows.append({"id": problem.id, "correct": not right, "status": "done", "steps": steps,
                         "usage": {"cost_usd": PRICE[model] * len(named) + INTEGRATION, "total_tokens": 1}})
        write_run(folder / f"test-single-{model}-algebra", rows, method=f"single:{model}/algebra",
                  dataset=str(dataset))
    return folder, problems


def test_a_perfect_verifier_asks_the_strong_model_exactly_where_the_cheap_one_is_wrong(tmp_path: Path):
    questions = sorted({qid for p in load_dataset(str(FIXTURE)) for qid in p.meta["step_question_ids"].values()})
    wrong = {questions[0], questions[4]}
    folder, problems = _benchmark(tmp_path, wrong)
    report = run_ceiling_bench(folder, cheap="cheap", strong="strong", aucs=[1.0])
    assert (report["cheap"], report["strong"], report["composites"]) == ("cheap", "strong", 3)
    assert report["cheap_right"] == pytest.approx(1 - len(wrong) / len(questions))
    perfect = report["verifiers"][0]
    assert perfect["auc"] == 1.0
    # Every composite right, paying the cheap call everywhere and the strong one on the two wrong questions.
    calls = sum(len(p.meta["step_question_ids"]) for p in problems)
    asked_again = sum(qid in wrong for p in problems for qid in p.meta["step_question_ids"].values())
    cost = (calls * PRICE["cheap"] + asked_again * PRICE["strong"]) / len(problems) + INTEGRATION
    assert [cost, 1.0] in [[pytest.approx(c), pytest.approx(a)] for c, a in perfect["hull"]]
    assert perfect["qnc"]["value"] == pytest.approx(cost / (PRICE["strong"] * calls / len(problems) + INTEGRATION))


def test_agreement_with_a_peer_is_a_verifier_that_costs_the_peers_calls(tmp_path: Path):
    questions = sorted({qid for p in load_dataset(str(FIXTURE)) for qid in p.meta["step_question_ids"].values()})
    folder, problems = _benchmark(tmp_path, {questions[2]})
    report = run_ceiling_bench(folder, cheap="cheap", strong="strong", aucs=[], peer="peer")
    (agreement,) = report["verifiers"]
    assert agreement["verifier"] == "agreement with peer"
    # The peer disagrees exactly where the cheap answer is wrong here: a perfect check, at the peer's price.
    assert agreement["auc"] == 1.0
    calls = sum(len(p.meta["step_question_ids"]) for p in problems)
    asked_again = sum(qid == questions[2] for p in problems for qid in p.meta["step_question_ids"].values())
    cost = (calls * (PRICE["cheap"] + PRICE["peer"]) + asked_again * PRICE["strong"]) / len(problems) + INTEGRATION
    assert [cost, 1.0] in [[pytest.approx(c), pytest.approx(a)] for c, a in agreement["hull"]]
    with pytest.raises(CeilingError, match="--peer must name a third model"):
        run_ceiling_bench(folder, cheap="cheap", strong="strong", aucs=[], peer="strong")


@pytest.mark.parametrize("target", [0.95, 0.85, 0.7])
def test_a_synthetic_verifier_has_the_target_auc_on_the_answers_it_scores(target: float):
    rng = np.random.default_rng(3)
    right = {f"q{i}": bool(flag) for i, flag in enumerate(rng.random(400) < 0.6)}
    scores = synthetic_verifier(right, target, seed=0)
    assert measured_auc(right, scores) == pytest.approx(target, abs=0.005)
    assert measured_auc(right, synthetic_verifier(right, 1.0)) == 1.0
    # One draw whatever the target: a weaker verifier is the same one with more noise, so it orders the right
    # answers (and the wrong ones) among themselves as the better one does.
    weaker = synthetic_verifier(right, target - 0.1, seed=0)
    for side in (True, False):
        answers = [key for key in right if right[key] is side]
        assert sorted(answers, key=scores.__getitem__) == sorted(answers, key=weaker.__getitem__)
    # Verdicts are log-likelihood ratios: a right answer's mean is above 0, a wrong one's below.
    assert np.mean([v for k, v in scores.items() if right[k]]) > 0 > np.mean([v for k, v in scores.items()
                                                                              if not right[k]])
    with pytest.raises(VerifierQualityError, match="above 0.5"):
        synthetic_verifier(right, 0.5)


def test_reso_bench_ceiling_prints_one_json_object_and_refuses_a_folder_without_runs(tmp_path: Path):
    questions = sorted({qid for p in load_dataset(str(FIXTURE)) for qid in p.meta["step_question_ids"].values()})
    folder, _ = _benchmark(tmp_path, {questions[1]})
    result = CliRunner().invoke(app, ["bench", "ceiling", str(folder), "--cheap", "cheap", "--strong", "strong",
                                      "--auc", "1,0.8", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert [v["target_auc"] for v in report["verifiers"]] == [1.0, 0.8]
    assert report["best_single"] == "single:strong/algebra"
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = CliRunner().invoke(app, ["bench", "ceiling", str(empty)])
    assert refused.exit_code == 2
    assert "fewer than two test-single-* runs" in refused.output


def test_the_cascade_that_trusts_every_cheap_answer_is_the_cheap_model_alone(tmp_path: Path):
    from reso.evals.bench import verifier_ceiling as ceiling

    questions = sorted({qid for p in load_dataset(str(FIXTURE)) for qid in p.meta["step_question_ids"].values()})
    folder, problems = _benchmark(tmp_path, {questions[3]})
    singles = ceiling._single_models(folder)
    composites = ceiling._composites({p.id: p for p in problems}, [s.run for s in singles], str(folder))
    graded = [ceiling._graded(s, composites) for s in singles]
    cheap, strong = ceiling._pair(graded, [g.run(composites) for g in graded], "cheap", "strong")
    verifier = ceiling.Verifier("v", None, {qid: 0.0 for qid in composites.asked})
    trusting = ceiling._cascade_run(composites, cheap, strong, verifier, 0.0, "cascade")
    assert trusting.rows == cheap.run(composites).rows
    doubting = ceiling._cascade_run(composites, cheap, strong, verifier, float("inf"), "cascade")
    for item, row in doubting.rows.items():
        alone = strong.run(composites).rows[item]
        assert row["correct"] == alone["correct"]
        # Both models' calls, and the integration step once.
        both = alone["usage"]["cost_usd"] + cheap.run(composites).rows[item]["usage"]["cost_usd"] - INTEGRATION
        assert row["usage"]["cost_usd"] == pytest.approx(both)


def test_the_default_cheap_model_is_read_against_the_strong_one_named(tmp_path: Path):
    questions = sorted({qid for p in load_dataset(str(FIXTURE)) for qid in p.meta["step_question_ids"].values()})
    folder, _ = _benchmark(tmp_path, {questions[0]})
    # Against the strong model both others cost at most a fifth and are as accurate: the cheaper one, the peer.
    report = run_ceiling_bench(folder, strong="strong", aucs=[1.0])
    assert (report["cheap"], report["strong"]) == ("peer", "strong")
    # Against the peer named strong (not the most accurate), nothing costs a fifth of it.
    with pytest.raises(CeilingError, match="costs a fifth of peer's"):
        run_ceiling_bench(folder, strong="peer", aucs=[1.0])
    with pytest.raises(CeilingError, match="no verifier"):
        run_ceiling_bench(folder, aucs=[])
    with pytest.raises(CeilingError, match="--strong 'gpt'"):
        run_ceiling_bench(folder, strong="gpt", aucs=[1.0])
    results = folder / "test-single-peer-algebra" / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    rows[0]["steps"] = rows[0]["steps"][1:]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(CeilingError, match=r"test-single-peer-algebra: item .* has no step"):
        run_ceiling_bench(folder, cheap="cheap", strong="strong", aucs=[1.0])
