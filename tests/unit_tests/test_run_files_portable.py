"""Run files hold no path of this machine (`reso.evals.portable`): summary.json, provenance.json, the results
and the reports write a path relative to the run folder, `<reso>/…` inside the package or `~/…` under the
home folder, and the command as `reso …`, never the script's or the interpreter's path. And the test suite's
own hygiene: `pytest` names the tests it skips."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.defaults import data_dir
from reso.evals.cli import app
from reso.evals.portable import package_root, portable_command, portable_path, portable_text, resolved_in

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "datasets"


def test_paths_are_written_relative_to_the_run_folder_the_package_or_home(tmp_path: Path) -> None:
    run = tmp_path / "sweep" / "run"
    assert portable_path(tmp_path / "data.jsonl", run) == "../../data.jsonl"
    assert portable_path(run / "dadb.sqlite", run) == "dadb.sqlite"
    assert portable_path(data_dir() / "two_model_pool.yaml", run) == "<reso>/agents/data/two_model_pool.yaml"
    assert portable_path("relative/x.yaml", run) == "relative/x.yaml"  # as typed
    home = Path.home().resolve()
    if not tmp_path.resolve().is_relative_to(home):
        assert portable_path(home / "pools" / "p.yaml", run) == "~/pools/p.yaml"


def test_paths_inside_specs_and_arguments_are_rewritten_and_nothing_else(tmp_path: Path) -> None:
    run = tmp_path / "run"
    replay = f"replay:{data_dir() / 'a.jsonl.gz'},{data_dir() / 'b.jsonl.gz'}#gpt-4o"
    assert portable_text(replay, run) == "replay:<reso>/agents/data/a.jsonl.gz,<reso>/agents/data/b.jsonl.gz#gpt-4o"
    assert portable_text(f"peer:{tmp_path / 'crm-peer'}", run) == "peer:../crm-peer"
    assert portable_text(f"--pool={tmp_path / 'p.yaml'}", run) == "--pool=../p.yaml"
    for text in ("http://127.0.0.1:8000/v1", "postgresql://me:***@/reso?host=/var/run/postgresql", "3/4",
                 "x = 1 /2", "gsm8k-mas-easy-test", "Error code: 404 - Not Found /v1/chat/completions"):
        assert portable_text(text, run) == text
    assert portable_command([sys.executable, "-m", "reso.evals.cli", "eval", "--out", str(run)], run) == [
        "reso", "-m", "reso.evals.cli", "eval", "--out", "."]


def test_a_path_written_in_a_run_file_opens_again(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n")
    assert resolved_in(run, portable_path(data, run)) == str(data.resolve())
    pool = data_dir() / "two_model_pool.yaml"
    assert Path(resolved_in(run, portable_path(pool, run))) == pool.resolve()
    assert resolved_in(run, "gsm8k-mas-easy-test") == "gsm8k-mas-easy-test"


def test_no_file_of_a_run_holds_a_path_of_this_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = Path(shutil.copy(FIXTURES / "plain_sample.jsonl", tmp_path / "questions.jsonl"))
    pool = Path(shutil.copy(data_dir() / "two_model_pool.yaml", tmp_path / "pool.yaml"))
    shutil.copy(data_dir() / "gsm8k_replay_dev.jsonl", tmp_path)  # beside the pool: its models' specs name it
    out = tmp_path / "runs" / "eval"
    args = ["eval", "--dataset", str(dataset), "--pool", str(pool), "--out", str(out), "--mode", "train",
            "--db", str(tmp_path / "dadb.sqlite"),
            "--set", f"run.cache_file={tmp_path / 'cache' / 'responses.sqlite'}",
            "--limit", "4", "--quiet", "--set", "selection.embedder=hash:64"]
    monkeypatch.setattr("sys.argv", [str(Path(sys.executable).with_name("reso")), *args])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    machine = {str(tmp_path), str(tmp_path.resolve()), sys.executable, sys.prefix, str(Path.home()),
               str(package_root())}
    written = sorted(path for path in out.rglob("*") if path.is_file())
    assert {"summary.json", "provenance.json", "results.jsonl", "report.md", "report.html"} <= {
        path.name for path in written}
    for path in written:
        content = path.read_bytes()
        found = [text for text in machine if text.encode() in content]
        assert not found, f"{path.name} holds {found}"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["command"][:3] == ["reso", "eval", "--dataset"]
    assert summary["dataset"] == "../../questions.jsonl" and summary["settings"]["pool"] == "../../pool.yaml"
    assert summary["settings"]["db"] == "../../dadb.sqlite"
    specs = {candidate["model"] for line in (out / "results.jsonl").read_text().splitlines()
             for step in json.loads(line)["steps"] for candidate in step["candidates"]}
    assert "replay:../../gsm8k_replay_dev.jsonl#mistralai/Mixtral-8x7B-Instruct-v0.1" in specs, specs
    # The rerun resumes from these files: same settings, same paths.
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output


def test_pytest_names_the_tests_it_skips_and_why() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    flags = [flag[2:] for flag in str(options.get("addopts", "")).split() if flag.startswith("-r")]
    assert flags and all(kind in flags[-1] for kind in "fEs"), options.get("addopts")
