"""What a run leaves on disk, and what it says about its DADB (issue 23, "nothing wrong without a word").

- A test-mode run (`reso eval`, `reso solve`, the Python API) given a DADB that does not exist refuses it in
  one line naming it and how to train one, and creates nothing: only a training run creates a DADB.
- A run refused at its options leaves no file: no out folder, DADB, profile index, pool file or cache.
- One `reso eval` writes only inside its `--out`: no sweep report, plot or response cache beside it.
- A test run on a DADB that learned nothing says so once: a warning for one named explicitly, a note for
  an in-memory one (a pool other than the default, whose shipped DADB has learned: its runs say nothing).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.agents.dadb.base import DADBMissingError
from reso.agents.dadb.sqlite import DADB
from reso.agents.defaults import two_model_pool_path
from reso.evals.cli import app
from reso.graphs.dadb_notice import UntrainedDADBWarning

QUESTION = "What is 2+2?"
FAST = ("--set", "selection.embedder=hash:64", "--quiet")
UNTRAINED_POOL = ("--pool", str(two_model_pool_path()))  # no DADB shipped for it


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "RESO_DB_URL": ""})


def tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


def touched(root: Path, before: dict[str, tuple[int, int]]) -> set[str]:
    """The files under `root` written since `before` (`stamps`): new or changed."""
    return {name for name, stamp in stamps(root).items() if before.get(name) != stamp}


def stamps(root: Path) -> dict[str, tuple[int, int]]:
    return {str(path.relative_to(root)): (path.stat().st_mtime_ns, path.stat().st_size)
            for path in root.rglob("*") if path.is_file()}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "ok.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "a", "question": QUESTION, "answer": "4"}) + "\n", encoding="utf-8")
    return path


def test_a_test_run_on_a_misspelled_dadb_exits_2_in_one_line_and_creates_nothing(tmp_path: Path,
                                                                                   dataset: Path) -> None:
    trained = tmp_path / "runs" / "demo" / "dadb.sqlite"
    DADB(trained).close()
    typo = tmp_path / "runs" / "demo" / "dadb.sqlit"
    before = tree(tmp_path)
    hint = f"{typo}: no DADB there; a test run only reads one that a training run made: check the name, or train " \
           f"one first with reso eval --mode train --db {typo}"
    refused = invoke("eval", "--dataset", str(dataset), "--db", str(typo), "--out", str(tmp_path / "runs" / "rows"),
                     *FAST)
    assert (refused.exit_code, refused.stdout, refused.stderr.splitlines()) == (2, "", [f"error: {hint}"])
    refused = invoke("solve", QUESTION, "--db", str(typo), "--json")
    assert (refused.exit_code, refused.stdout, refused.stderr.splitlines()) == (2, "", [f"error: {hint}"])
    with pytest.raises(DADBMissingError, match="dadb.sqlit: no DADB there"):
        from reso.graphs.api import ReSo

        ReSo({"selection.embedder": "hash:64"}, db=str(typo)).solve(QUESTION)
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "part"),
    [(("--mode", "train", "--set", "asking.k=0"), "asking.k must be >= 1, got 0"),
     (("--mode", "train", "--method", "single:nobody"), "no agent or model 'nobody'"),
     (("--mode", "train", "--scorer", "magic"), "unknown scorer kind 'magic'"),
     (("--mode", "train", "--pool", "replay:gsm8k_dev.jsonl.gz", "--set", "asking.k=0"),
      "asking.k must be >= 1, got 0"),
     (("--method", "vote:2", *UNTRAINED_POOL), "the DADB has none"),
     (("--mode", "train", "--method", "vote:3"), "dadb.sqlite does not exist yet: train it first")],
    ids=["k", "method", "scorer", "replay-pool", "vote", "vote-train"],
)
def test_a_run_refused_at_its_options_leaves_no_file(tmp_path: Path, dataset: Path, args: tuple[str, ...],
                                                     part: str) -> None:
    before = tree(tmp_path)
    refused = invoke("eval", "--dataset", str(dataset), "--out", str(tmp_path / "runs" / "bad2"), *FAST, *args)
    assert refused.exit_code == 2 and len(refused.stderr.splitlines()) == 1 and part in refused.stderr, \
        refused.stderr
    assert tree(tmp_path) == before


def test_one_eval_writes_only_inside_its_out_and_says_once_that_nothing_was_learned(tmp_path: Path,
                                                                                    dataset: Path) -> None:
    runs = tmp_path / "runs"
    other = tmp_path / "data" / "other.jsonl"  # a run of another dataset in the same parent folder
    other.write_text(json.dumps({"id": "b", "question": "What is 3+5?", "answer": "8"}) + "\n", encoding="utf-8")
    assert invoke("eval", "--dataset", str(other), "--out", str(runs / "other"), *FAST).exit_code == 0
    before = stamps(tmp_path)
    result = invoke("eval", "--dataset", str(dataset), "--out", str(runs / "e1"), *FAST, *UNTRAINED_POOL)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["n"] == 1
    written = touched(tmp_path, before)
    assert written and all(name.startswith("runs/e1/") for name in written), sorted(written)
    assert "runs/e1/responses.sqlite" in written and "runs/e1/dadb.sqlite" not in written
    assert result.stderr.splitlines() == [
        "note: no DADB given for this pool (--db, or db= in Python; the trained one shipped goes with the default "
        "pool), so no record was learned: selection has none to go on; a training run makes one "
        "(reso eval --mode train --db FILE)"]
    # On the default pool the shipped DADB has learned: nothing to say.
    default = invoke("eval", "--dataset", str(dataset), "--out", str(runs / "e0"), *FAST)
    assert default.exit_code == 0 and default.stderr == "", default.stderr


def test_a_named_dadb_that_learned_nothing_runs_with_one_warning(tmp_path: Path, dataset: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    DADB(empty).close()
    result = invoke("eval", "--dataset", str(dataset), "--db", str(empty), "--out", str(tmp_path / "e2"), *FAST)
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: DADB {empty} has learned nothing (no training record): selection has no record to go on"]
    single = invoke("eval", "--dataset", str(dataset), "--db", str(empty), "--method", "single:gpt-4-1106-preview",
                    "--out", str(tmp_path / "e3"), *FAST, *UNTRAINED_POOL)
    # A method that never reads the DADB is not warned about (the two-model pool has no recording of this
    # question for one model alone: its one line says so).
    assert single.exit_code == 1 and [line[:25] for line in single.stderr.splitlines()] == ["error: every item failed:"]


def test_the_python_api_warns_once_about_a_dadb_that_learned_nothing(tmp_path: Path) -> None:
    from reso.graphs.api import ReSo

    empty = tmp_path / "empty.sqlite"
    DADB(empty).close()
    reso = ReSo({"selection.embedder": "hash:64"}, db=str(empty))
    with pytest.warns(UntrainedDADBWarning, match="has learned nothing") as caught:
        assert reso.solve(QUESTION).answer == "4"
        reso.solve(QUESTION)
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # training learns: no warning
        ReSo({"selection.embedder": "hash:64"}, db=str(tmp_path / "trained.sqlite"), mode="train").solve(QUESTION)
