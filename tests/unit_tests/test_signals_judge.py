"""The signals judge (`reso.reward.signals_judge`) and `reso bench judge`: in a world where two models fail
together and each specialist is strong on one topic, the judge beats the plurality by reading who is good on
this kind of question and whose mistakes go together; saved and loaded it scores alike; bad input is refused
in one line."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.selection.embeddings import load_embedder
from reso.evals.bench.judge import METHODS, JudgeBenchError, expected_calibration_error, run_judge_bench
from reso.evals.cli import app
from reso.reward import registry as scorer_registry
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.labelled_records import load_records
from reso.reward.registry import build_scorer, register_scorer
from reso.reward.training.signals_judge_fit import fit_signals_judge

TEAM = ["geo", "alg", "twin-a", "twin-b"]


def _question(topic: str, i: int) -> str:
    if topic == "geometry":
        return f"A triangle has sides {i}, {i + 3} and {i + 5}. Find the area of the triangle in square units."
    return f"Solve the equation x^2 - {i}x + {i + 2} = 0 and give the sum of the roots of the polynomial."


def _world(path: Path, start: int, count: int, seed: int) -> Path:
    """Replay lines: `geo` is right on 90 % of geometry questions and 20 % of algebra ones, `alg` the other
    way round; the twins are right together half the time, and wrong together with one shared value."""
    chooser = random.Random(seed)
    lines = []
    for i in range(start, start + count):
        topic = "geometry" if i % 2 else "algebra"
        reference = str(1000 + i)
        twins_right = chooser.random() < 0.5
        right = {"geo": chooser.random() < (0.9 if topic == "geometry" else 0.2),
                 "alg": chooser.random() < (0.9 if topic == "algebra" else 0.2),
                 "twin-a": twins_right, "twin-b": twins_right}
        values = {m: reference if ok else str(5000 + i * 7 + n) for n, (m, ok) in enumerate(right.items())}
        values["twin-b"] = values["twin-a"]
        responses = {m: f"Working through the {topic} step by step. The answer is \\boxed{{{v}}}."
                     for m, v in values.items()}
        lines.append({"id": f"q{i}", "question": _question(topic, i), "answer": reference,
                      "responses": responses, "correct": right})
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
    return path


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("judge-world")
    return _world(folder / "train.jsonl.gz", 0, 240, seed=1), _world(folder / "test.jsonl.gz", 1000, 200, seed=2)


def test_the_judge_beats_the_plurality_where_who_is_good_here_and_who_fails_together_tell(sides):
    train, test = sides
    report = run_judge_bench([train], [test], models=TEAM, embedder="hash:256")
    accuracy = {row["method"]: row["accuracy"] for row in report["rows"]}
    assert [row["method"] for row in report["rows"]] == list(METHODS)
    assert report["n"] == 200 and report["models"] == TEAM and report["answers_graded"] == 800
    # The twins' shared wrong value outvotes a lone specialist: the plurality is right about as often as the
    # twins (half the time, plus the questions where both specialists beat them).
    assert accuracy["plurality"] < 0.72
    assert accuracy["judge"] >= accuracy["plurality"] + 0.15
    assert accuracy["judge"] <= accuracy["oracle"]
    low, high = report["judge_minus_plurality"]["ci95"]
    assert low > 0 and low <= report["judge_minus_plurality"]["points"] <= high
    assert report["auc"] > 0.85 and report["ece"] < 0.12
    for row in report["rows"]:
        assert row["ci95"][0] <= row["accuracy"] <= row["ci95"][1]


def test_a_saved_judge_scores_as_the_fitted_one_and_reads_no_answer_as_zero(sides, tmp_path):
    train, _ = sides
    judge = fit_signals_judge(load_records(train), load_embedder("hash:256"), team=TEAM)
    judge.save(tmp_path / "judge")
    loaded = build_scorer(f"signals:{tmp_path / 'judge'}")
    question = _question("geometry", 7001)
    items = [ScoreItem(subtask=question, answer=f"The answer is \\boxed{{{v}}}.", agent_id=m, model=m, group="g")
             for m, v in (("geo", "12"), ("twin-a", "40"), ("twin-b", "40"))]
    items.append(ScoreItem(subtask=question, answer="I cannot tell.", agent_id="alg", model="alg", group="g"))
    fitted, again = judge.score_detailed(items), loaded.score_detailed(items)
    assert [s.value for s in again] == pytest.approx([s.value for s in fitted])
    # On geometry the specialist alone is more likely right than the twins' agreement.
    assert fitted[0].value > fitted[1].value == fitted[2].value
    assert fitted[3].value == 0.0 and fitted[3].reason == "no final answer"
    assert 0.0 < judge.discrimination <= 1.0


def test_a_repeated_answer_of_one_model_does_not_confirm_itself(sides):
    train, _ = sides
    judge = fit_signals_judge(load_records(train), load_embedder("hash:256"), team=TEAM)
    question = _question("algebra", 7002)

    def scores(models: list[str]) -> list[float]:
        return judge.score([ScoreItem(subtask=question, answer=f"\\boxed{{{v}}}", agent_id=f"{m}/{n}", model=m,
                                      group="g") for n, (m, v) in enumerate(models_values(models))])

    def models_values(models: list[str]) -> list[tuple[str, str]]:
        return [(m, "7" if m == "geo" else "9") for m in models]

    once, twice = scores(["geo", "alg"]), scores(["geo", "alg", "alg"])
    assert twice[:2] == pytest.approx(once) and twice[2] == pytest.approx(once[1])


def test_the_calibration_error_is_the_weighted_gap_of_its_bins():
    import numpy as np

    probabilities = np.array([0.05, 0.05, 0.95, 0.95, 0.55])
    labels = np.array([0, 1, 1, 1, 0])
    # Bins: [0.0, 0.1): |0.5 - 0.05| × 2; [0.9, 1.0]: |1 - 0.95| × 2; [0.5, 0.6): |0 - 0.55| × 1.
    assert expected_calibration_error(probabilities, labels) == pytest.approx((0.9 + 0.1 + 0.55) / 5)


def test_the_bench_refuses_test_questions_it_trained_on_and_models_it_never_recorded(sides, tmp_path):
    train, test = sides
    runner = CliRunner()
    same = runner.invoke(app, ["bench", "judge", "--train-questions", str(train), "--test-questions", str(train),
                               "--models", ",".join(TEAM), "--embedder", "hash:64"])
    assert same.exit_code == 2 and "240 test questions are also training questions" in same.output
    unknown = runner.invoke(app, ["bench", "judge", "--train-questions", str(train), "--test-questions",
                                  str(test), "--models", "geo,nobody", "--embedder", "hash:64"])
    assert unknown.exit_code == 2 and "'nobody' has no recorded answer on the training side" in unknown.output
    missing = runner.invoke(app, ["bench", "judge", "--train-questions", str(tmp_path / "none.jsonl"),
                                  "--test-questions", str(test)])
    assert missing.exit_code == 2 and "none.jsonl: no such file" in missing.output
    assert "Traceback" not in same.output + unknown.output + missing.output


def test_the_bench_prints_one_json_object_with_the_issues_fields(sides):
    train, test = sides
    # Files comma-separated, as `reso demo` takes them (the same file twice adds nothing).
    result = CliRunner().invoke(app, ["bench", "judge", "--train-questions", f"{train},{train}",
                                      "--test-questions", str(test), "--embedder", "hash:256", "--top", "4", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report) >= {"rows", "auc", "ece", "n", "models"}
    # By default the four models are taken by their training records, best first.
    assert sorted(report["models"]) == sorted(TEAM) and report["n"] == 200
    assert {row["method"] for row in report["rows"]} == set(METHODS)


def test_the_default_team_comes_from_a_pool_files_models_when_one_is_named(sides, tmp_path):
    train, test = sides
    pool = tmp_path / "pool.yaml"
    pool.write_text("name: specialists\nmodels:\n" + "".join(
        f"  - spec: \"replay:{train}#{model}\"\n    name: {model}\n    price_in: 1\n    price_out: 1\n" for model in ("geo", "alg"))
        + "roles: [Algebra]\n", encoding="utf-8")
    report = run_judge_bench([train], [test], pool=pool, embedder="hash:64")
    assert sorted(report["models"]) == ["alg", "geo"]
    with pytest.raises(ValueError, match="--pool: .*nowhere.yaml"):
        run_judge_bench([train], [test], pool=tmp_path / "nowhere.yaml", embedder="hash:64")


class _Sure(Scorer):
    """A CRM as sure of every answer: its vote is the plurality."""

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        return [Score(0.8) for _ in items]


def test_a_vote_weighted_by_a_perfect_verifier_is_the_oracle_and_a_weak_one_stays_near_the_plurality(
        sides, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(scorer_registry, "_FACTORIES", dict(scorer_registry._FACTORIES))
    register_scorer("sure", _Sure)
    train, test = sides
    report = run_judge_bench([train], [test], models=TEAM, embedder="hash:256", verifier_aucs=[1.0, 0.6],
                             verifier_crm="sure")
    accuracy = {row["method"]: row["accuracy"] for row in report["rows"]}
    perfect, weak, crm = report["verifiers"]
    assert (perfect["verifier"], perfect["target_auc"], perfect["auc"]) == ("synthetic AUC 1", 1.0, 1.0)
    assert perfect["accuracy"] == pytest.approx(accuracy["oracle"])
    assert perfect["minus_plurality"]["points"] == pytest.approx(100 * (accuracy["oracle"] - accuracy["plurality"]))
    assert weak["auc"] == pytest.approx(0.6, abs=0.01)
    assert abs(weak["accuracy"] - accuracy["plurality"]) < abs(perfect["accuracy"] - accuracy["plurality"])
    assert crm["verifier"] == "crm sure" and crm["accuracy"] == pytest.approx(accuracy["plurality"])
    with pytest.raises(JudgeBenchError, match="--verifier-auc"):
        run_judge_bench([train], [test], models=TEAM, embedder="hash:256", verifier_aucs=[0.4])


def test_a_weighted_vote_lets_a_well_scored_lone_answer_beat_a_badly_scored_pair():
    from reso.evals.bench.judge import _plurality, _weighted_vote

    items = [ScoreItem(subtask="q", answer=f"The answer is \\boxed{{{v}}}.", model=m)
             for m, v in (("a", "7"), ("b", "7"), ("c", "9"))]
    assert _plurality(items, [0, 1, 2]) == 0
    assert _weighted_vote(items, [0, 1, 2], [0.2, 0.3, 0.9]) == 2
    assert _weighted_vote(items, [0, 1, 2], [0.5, 0.5, 0.9]) == 0
