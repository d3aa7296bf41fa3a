"""A results folder remembers what produced it: a rerun with the same method, dataset, pool and answer-changing
settings resumes; one that differs is refused before any item runs, naming each differing field."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reso.agents.pool import Pool
from reso.agents.pool_source import load_pool_for
from reso.evals.datasets import Problem
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.methods import parse_method
from reso.evals.provenance import (
    FILE_NAME,
    Provenance,
    ProvenanceError,
    _portable,
    pool_identity,
    read_provenance,
)
from reso.evals.results import ResultsFile, ResultsFormatError
from reso.evals.runner import run_eval
from reso.graphs.settings import ANSWER_SETTINGS, FORMER_NAMES, ReSoSettings
from reso.graphs.team import Team
from tests.engine_fakes import ScriptedAnswerer, scripted_team


def _problem(index: int, question: str | None = None) -> Problem:
    plan = [{"id": "0", "instruction": f"Q{index} part A", "depends_on": []},
            {"id": "final", "instruction": "Please calculate the value of Answer[0]*3.", "depends_on": ["0"]}]
    return Problem(id=f"p{index}", question=question or f"question {index}", answer=str(3 * (index + 2)),
                   plan=plan, subtask_answers={"0": str(index + 2)})


PROBLEMS = [_problem(i) for i in range(4)]


def _team() -> tuple[Team, ScriptedAnswerer]:
    answerer = ScriptedAnswerer(answers={f"Q{p.id[1:]} part A": f"\\boxed{{{int(p.id[1:]) + 2}}}" for p in PROBLEMS},
                                calls=[])

    def choose(subtask: str) -> list[str]:
        return ["calc"] if subtask.startswith("Please calculate") else ["solver"]

    return scripted_team({"solver": answerer}, choose), answerer


def _run(out: Path, problems: list[Problem], team: Team, method: str = "reso", dataset: str = "unit",
         budget_usd: float | None = None, **settings: Any) -> dict[str, Any]:
    config = EvalConfig(dataset=dataset, method=parse_method(method, team.pool), out=out,
                        settings=ReSoSettings().replace({FORMER_NAMES.get(k, k): v for k, v in settings.items()}),
                        command=["reso", "eval"], run=RunOptions(concurrency=2, budget_usd=budget_usd))
    return asyncio.run(run_eval(config, problems, team))


def _recorded(out: Path) -> dict[str, Any]:
    return json.loads((out / FILE_NAME).read_text(encoding="utf-8"))


def test_whether_a_setting_changes_answers_is_read_off_its_metadata() -> None:
    every = set(ReSoSettings().values())
    assert set(ANSWER_SETTINGS) <= every and len(ANSWER_SETTINGS) == len(set(ANSWER_SETTINGS))
    # The pool is compared by content; the schedule only orders subtasks; review pauses interactive runs.
    assert every - set(ANSWER_SETTINGS) == {"pool", "plan.schedule", "plan.review"}
    assert {"asking.k", "selection.variant", "reward.scorer", "limits.max_usd", "answer_value_usd"} <= set(
        ANSWER_SETTINGS)


def test_a_folder_recorded_under_the_flat_names_reads_under_the_keys_now() -> None:
    old = Provenance.model_validate({
        "method": "reso", "dataset": "d", "pool": {"name": "p", "sha256": "0" * 64}, "items": {},
        "settings": {"k": 3, "score_variant": "moss", "selection": "ucb", "exploration": None, "scorer": "rule"}})
    assert old.settings == {"asking.k": 3, "selection.variant": "moss", "selection.policy": "reputation",
                            "reward.scorer": "rule"}


def test_the_first_run_records_method_dataset_pool_settings_and_items(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team, method="single:solver", k=3, seed=5)
    recorded = _recorded(tmp_path)
    assert recorded["method"] == "single:solver" and recorded["dataset"] == "unit"
    assert recorded["pool"]["name"] == "scripted" and len(recorded["pool"]["sha256"]) == 64
    # The method's overrides apply: a single model answers each subtask alone, whatever --k says.
    assert recorded["settings"]["asking.k"] == 1 and recorded["settings"]["seed"] == 5
    assert set(recorded["settings"]) == set(ANSWER_SETTINGS)
    assert list(recorded["items"]) == ["p0", "p1"] and len(set(recorded["items"].values())) == 2
    assert "note" not in recorded


def test_the_same_values_resume_and_a_larger_limit_adds_items(tmp_path: Path) -> None:
    team, answerer = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    first = _recorded(tmp_path)
    calls = len(answerer.calls)
    summary = _run(tmp_path, PROBLEMS, team)
    assert summary["n"] == 4
    assert len(answerer.calls) - calls == 2  # only the two new items were asked
    assert _recorded(tmp_path)["items"] == {**first["items"], **Provenance.of_run(
        method="reso", dataset="unit", settings=ReSoSettings(), pool=team.pool, problems=PROBLEMS,
        out=tmp_path).items}
    # A smaller limit reads the rows it needs and forgets none of the recorded items.
    assert _run(tmp_path, PROBLEMS[:1], team)["n"] == 1
    assert list(_recorded(tmp_path)["items"]) == ["p0", "p1", "p2", "p3"]


def test_different_values_are_refused_naming_each_field_before_any_item_runs(tmp_path: Path) -> None:
    team, answerer = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    results = (tmp_path / "results.jsonl").read_text()
    recorded = (tmp_path / FILE_NAME).read_text()
    calls = len(answerer.calls)
    with pytest.raises(ProvenanceError) as caught:
        _run(tmp_path, PROBLEMS, team, method="random", k=3, scorer="rule", answer_value_usd=0.5, dataset="other")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path}: holds 2 result(s) of a different run (")
    for part in ("method 'reso' → 'random'", "dataset 'unit' → 'other'", "k 2 → 3", "scorer 'consensus' → 'rule'",
                 "answer_value_usd 0.05 → 0.5", f"deleting {tmp_path / FILE_NAME}"):
        assert part in message, part
    assert "\n" not in message
    assert isinstance(caught.value, ResultsFormatError)  # what the command line turns into exit code 2
    assert len(answerer.calls) == calls
    assert (tmp_path / "results.jsonl").read_text() == results
    assert (tmp_path / FILE_NAME).read_text() == recorded


def test_settings_that_do_not_change_answers_still_resume(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    config = EvalConfig(dataset="unit", method=parse_method("reso", team.pool), out=tmp_path,
                        settings=ReSoSettings().replace({"plan.schedule": "waves"}), run=RunOptions(concurrency=1, budget_usd=5.0))
    assert asyncio.run(run_eval(config, PROBLEMS[:2], team))["n"] == 2


def test_a_dataset_whose_items_changed_is_refused(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    edited = [PROBLEMS[0], _problem(1, question="a different question"), *PROBLEMS[2:]]
    with pytest.raises(ProvenanceError, match=r"dataset item 'p1' changed content\)"):
        _run(tmp_path, edited, team)
    with pytest.raises(ProvenanceError, match="dataset items: none in common with the recorded ones"):
        _run(tmp_path, [dataclasses.replace(p, id=f"x{p.id}") for p in PROBLEMS], team)


def test_a_dataset_file_is_the_same_dataset_from_another_working_folder(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    team, _ = _team()
    data = tmp_path / "data" / "d.jsonl"
    data.parent.mkdir()
    data.write_text("{}\n")
    out = tmp_path / "run"
    monkeypatch.chdir(data.parent)
    _run(out, PROBLEMS[:2], team, dataset="d.jsonl")
    # Relative to the run folder: no path of this machine in the file (reso.evals.portable).
    assert _recorded(out)["dataset"] == "../data/d.jsonl"
    monkeypatch.chdir(tmp_path)
    assert _run(out, PROBLEMS[:2], team, dataset="data/d.jsonl")["n"] == 2


def test_a_folder_recorded_with_absolute_paths_still_resumes(tmp_path: Path) -> None:
    team, _ = _team()
    data = tmp_path / "d.jsonl"
    data.write_text("{}\n")
    out = tmp_path / "run"
    _run(out, PROBLEMS[:2], team, dataset=str(data))
    recorded = json.loads((out / FILE_NAME).read_text())
    recorded["dataset"] = str(data)  # as an earlier version wrote it
    (out / FILE_NAME).write_text(json.dumps(recorded))
    assert _run(out, PROBLEMS[:2], team, dataset=str(data))["n"] == 2


def test_another_pool_is_refused_by_content_not_by_name(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    dearer = Pool([agent.model_copy(update={"price_out": 9.0}) if agent.id == "solver" else agent
                   for agent in team.pool], name="scripted")
    with pytest.raises(ProvenanceError, match=r"pool 'scripted' \([0-9a-f]{8}\) → 'scripted' \([0-9a-f]{8}\)"):
        _run(tmp_path, PROBLEMS[:2], dataclasses.replace(team, pool=dearer))


def test_a_recorded_pool_is_the_same_pool_wherever_its_files_are_installed(tmp_path: Path) -> None:
    fixtures = Path(__file__).parents[1] / "fixtures" / "replay"
    here, there, edited = tmp_path / "here", tmp_path / "there", tmp_path / "edited"
    for folder in (here, there, edited):
        shutil.copytree(fixtures, folder)
    with (edited / "gsm_mini.jsonl").open("a", encoding="utf-8") as file:
        file.write("\n")  # the same recordings' file with other bytes

    def identity(folder: Path) -> str:
        pool = load_pool_for(f"replay:{folder / 'gsm_mini.jsonl'}", folder / "prices.yaml")
        assert str(folder) in next(iter(pool)).model.spec  # loading made the path absolute
        return pool_identity(pool).sha256

    assert identity(here) == identity(there)
    assert identity(edited) != identity(here)


def test_a_local_checkpoint_folder_counts_by_its_name(tmp_path: Path) -> None:
    for parent in ("a", "b"):
        (tmp_path / parent / "tiny-model").mkdir(parents=True)

    def identity(parent: str) -> str:
        agent = {"id": "m/algebra", "model": {"spec": f"local:{tmp_path / parent / 'tiny-model'}"}}
        return _portable(agent)["model"]["spec"]

    assert identity("a") == identity("b") == "local:tiny-model"


def test_a_folder_moved_with_its_dadb_still_resumes(tmp_path: Path) -> None:
    team, _ = _team()
    first = tmp_path / "sweep" / "run"
    _run(first, PROBLEMS[:2], team, db=str(tmp_path / "sweep" / "dadb.sqlite"))
    assert _recorded(first)["settings"]["db"] == "../dadb.sqlite"
    shutil.copytree(tmp_path / "sweep", tmp_path / "moved")
    moved = tmp_path / "moved" / "run"
    assert _run(moved, PROBLEMS[:2], team, db=str(tmp_path / "moved" / "dadb.sqlite"))["n"] == 2
    with pytest.raises(ProvenanceError, match=r"db '../dadb.sqlite' → '../../sweep/dadb.sqlite'"):
        _run(moved, PROBLEMS[:2], team, db=str(tmp_path / "sweep" / "dadb.sqlite"))


def test_a_folder_recorded_under_the_old_setting_names_resumes_and_refuses_a_change(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team, score_variant="kl-ucb")
    recorded = _recorded(tmp_path)
    settings = recorded["settings"]
    # As a folder of the flat settings recorded them: `ucb_variant` (older still) and `selection`.
    settings["ucb_variant"] = settings.pop("selection.variant")
    settings["selection"] = "ucb"
    del settings["selection.policy"]
    (tmp_path / FILE_NAME).write_text(json.dumps(recorded), encoding="utf-8")
    assert _run(tmp_path, PROBLEMS[:2], team, score_variant="kl-ucb")["n"] == 2
    with pytest.raises(ProvenanceError, match="selection.variant 'kl-ucb' → 'thompson'"):
        _run(tmp_path, PROBLEMS[:2], team)
    with pytest.raises(ProvenanceError, match="selection.policy 'reputation' → 'random'"):
        _run(tmp_path, PROBLEMS[:2], team, score_variant="kl-ucb", selection="random")


def test_a_folder_whose_provenance_was_deleted_resumes_and_records_it_with_a_note(tmp_path: Path) -> None:
    team, answerer = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    (tmp_path / FILE_NAME).unlink()
    calls = len(answerer.calls)
    assert _run(tmp_path, PROBLEMS[:2], team, k=3)["n"] == 2
    assert len(answerer.calls) == calls
    recorded = _recorded(tmp_path)
    assert recorded["settings"]["asking.k"] == 3
    assert recorded["note"] == ("recorded on resume: the 2 row(s) already here were not checked (the folder had "
                                f"no {FILE_NAME})")


def test_a_folder_without_rows_takes_the_new_run(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team, budget_usd=1e-12)  # stopped before any item was written
    assert not (tmp_path / "results.jsonl").exists() or not (tmp_path / "results.jsonl").read_text()
    assert _recorded(tmp_path)["settings"]["asking.k"] == 2
    assert _run(tmp_path, PROBLEMS[:2], team, k=3)["n"] == 2
    assert _recorded(tmp_path)["settings"]["asking.k"] == 3


def test_a_refused_rerun_leaves_a_torn_last_line_in_place(tmp_path: Path) -> None:
    team, _ = _team()
    _run(tmp_path, PROBLEMS[:2], team)
    results = tmp_path / "results.jsonl"
    with results.open("a") as handle:
        handle.write('{"id": "p2", "answ')
    before = results.read_text()
    provenance = Provenance.of_run(method="reso", dataset="unit", settings=ReSoSettings().replace({"asking.k": 3}), pool=team.pool,
                                   problems=PROBLEMS, out=tmp_path)
    with pytest.raises(ProvenanceError, match="k 2 → 3"):
        ResultsFile(results, provenance=provenance)
    assert results.read_text() == before
    with ResultsFile(results) as reopened:  # the lock was released
        assert sorted(reopened.done) == ["p0", "p1"]


@pytest.mark.parametrize(("content", "part"), [
    ("{broken", f"{FILE_NAME}: Invalid JSON"),
    ('{"method": 3}', f"{FILE_NAME}: field 'method': Input should be a valid string"),
])
def test_an_unreadable_provenance_file_is_one_line_naming_it(tmp_path: Path, content: str, part: str) -> None:
    (tmp_path / FILE_NAME).write_text(content)
    with pytest.raises(ProvenanceError) as caught:
        read_provenance(tmp_path / FILE_NAME)
    assert part in str(caught.value) and "\n" not in str(caught.value)


def test_demo_reruns_into_its_folders_resume(tmp_path: Path) -> None:
    from reso.evals.jobs.config import DemoConfig
    from reso.evals.jobs.demo import run_demo

    # The vote as CRM: resuming is the point here (test_demo.py runs the default, calibrated CRM).
    config = DemoConfig(out=tmp_path, world="two-model", train_limit=3, test_limit=2, concurrency=2,
                        reso_variants={}, crm="vote")
    first = run_demo(config, log=lambda line: None)["gsm8k-mas"]
    assert (tmp_path / "gsm8k-mas" / "train-reso" / FILE_NAME).exists()
    again = run_demo(config, log=lambda line: None)["gsm8k-mas"]
    assert [(s["method"], s["n"], s["correct"]) for s in again] == [(s["method"], s["n"], s["correct"]) for s in first]
    with pytest.raises(ProvenanceError, match=r"train-reso: holds 3 result\(s\) of a different run \(seed 0 → 1\)"):
        run_demo(dataclasses.replace(config, seed=1), log=lambda line: None)
