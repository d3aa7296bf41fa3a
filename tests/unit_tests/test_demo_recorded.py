"""`reso demo` on a user's own recordings: composites from their training and test files, the CRM trained on the
training files' recorded answers only, the table as JSON; question files that share a question are refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.defaults import data_dir
from reso.evals.cli import app
from reso.evals.jobs.config import DemoConfig
from reso.evals.jobs.crm_fit import fit_general_crm
from reso.evals.jobs.recorded_benchmark import RecordedBenchmark
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import build_team

MODELS = ("gpt-4o-mini-2024-07-18", "deepseek-v2.5-0908", "Meta-Llama-3.1-8B-Instruct")


def _own_files(folder: Path) -> tuple[Path, Path, Path]:
    """Two files of GSM8K recordings of three models, as another harness would write them (the train file
    gzipped, the test file plain), and a pool replaying both."""
    rows = [json.loads(line) for line in gzip.open(data_dir() / "gsm8k_dev.jsonl.gz", "rt")][:60]
    for row in rows:
        for field in ("responses", "extracted", "correct"):
            row[field] = {m: row[field][m] for m in MODELS}
    train, test = folder / "mine-train.jsonl.gz", folder / "mine-test.jsonl"
    with gzip.open(train, "wt") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows[:40])
    test.write_text("".join(json.dumps(row) + "\n" for row in rows[40:]))
    pool = folder / "pool.yaml"
    pool.write_text("name: mine\nmodels:\n" + "".join(
        f'  - spec: "replay:{train},{test}#{m}"\n    name: {m}\n    price_in: 1.0\n    price_out: 2.0\n'
        for m in MODELS) + "roles: [Algebra, Arithmetic Word Problems]\n")
    return train, test, pool


def test_the_main_job_runs_on_your_own_files_and_prints_its_table_as_json(tmp_path) -> None:
    train, test, pool = _own_files(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        "demo", "--train-questions", str(train), "--test-questions", str(test), "--pool", str(pool),
        "--benchmark", "mine", "--set", "demo.train_n=8", "--set", "demo.test_n=5", "--crm", "vote",
        "--set", "demo.concurrency=4", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    rows = report["tables"]["mine"]
    labels = [row["method"] for row in rows]
    assert labels[0] == "reso" and any(label.startswith("best single model on the test") for label in labels)
    assert "oracle (uses labels)" in labels and "random" in labels
    assert all(row["n"] == 5 and len(row["accuracy_ci95"]) == 2 for row in rows)
    # The composites come from each side's own file: no test composite uses a training question.
    built = {side: json.loads((out / "mine" / "datasets" / f"mine-easy-{side}.json").read_text())
             for side in ("train", "test")}
    assert len(built["train"]) == 8 and len(built["test"]) == 5
    train_ids = {q for item in built["train"] for q in item["Q_ID"]}
    test_ids = {q for item in built["test"] for q in item["Q_ID"]}
    assert all(int(q.rsplit("-", 1)[1]) < 40 for q in train_ids)
    assert all(int(q.rsplit("-", 1)[1]) >= 40 for q in test_ids)


def test_the_crm_learns_only_the_training_files_answers(tmp_path) -> None:
    train, test, pool = _own_files(tmp_path)
    recorded = RecordedBenchmark.of("mine", str(train), str(test), 8, 5)
    team = build_team(ReSoSettings(pool=str(pool)))
    seen: list[int] = []

    def counting(answers, tune):  # the CRM's fit, counting what it is given
        seen.append(len(answers))
        raise StopIteration

    import reso.reward.training.small_crm_fit as small_crm_fit

    original = small_crm_fit.fit_small_crm
    small_crm_fit.fit_small_crm = counting  # type: ignore[assignment]
    try:
        with pytest.raises(StopIteration):
            fit_general_crm(DemoConfig(out=tmp_path, pool=str(pool), recorded=recorded), team.pool,
                            tmp_path / "crm", log=lambda line: None)
    finally:
        small_crm_fit.fit_small_crm = original
    assert seen == [40 * len(MODELS)]


def test_files_that_share_a_question_are_refused_naming_both(tmp_path) -> None:
    train, test, pool = _own_files(tmp_path)
    overlap = tmp_path / "overlap.jsonl"
    first = json.loads(gzip.open(train, "rt").readline())
    overlap.write_text(test.read_text() + json.dumps(first) + "\n")
    result = CliRunner().invoke(app, [
        "demo", "--train-questions", str(train), "--test-questions", str(overlap), "--pool", str(pool),
        "--benchmark", "mine", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert str(train) in result.output and str(overlap) in result.output and "both sides" in result.output


def test_incomplete_options_are_one_line_and_exit_2(tmp_path) -> None:
    train, _, pool = _own_files(tmp_path)
    result = CliRunner().invoke(app, ["demo", "--train-questions", str(train), "--pool", str(pool),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--test-questions" in result.output
