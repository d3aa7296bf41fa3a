"""Exactly-once DADB learning in evaluation runs: keyed batches, the results line written before the DADB
commit, and reconciliation on resume after a crash at any point between the two.

The tests that learn into a DADB run on both implementations (`dadb_store`: SQLite, then PostgreSQL).
"""

from __future__ import annotations

import asyncio
import gc
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reso.agents.dadb.base import AgentDatabase
from reso.evals.eval_config import EvalConfig, RunOptions
from reso.evals.ledger import item_key, run_id
from reso.evals.methods import parse_method
from reso.evals.runner import run_eval
from reso.graphs.api import ReSo
from reso.graphs.context import RunContext
from reso.graphs.learning import Learner, result_updates
from reso.graphs.settings import ReSoSettings
from tests.unit_tests.test_runner import _problem, _team


@dataclass
class LearningSelector:
    """The scripted selector of the runner tests, learning into a real DADB like ReputationSelector does."""

    inner: object
    dadb: AgentDatabase
    updates: list[tuple[str, float]] = field(default_factory=list)

    def select(self, subtask, k=None, *, domain=None, exclude=()):
        return self.inner.select(subtask, k, domain=domain, exclude=exclude)

    def update(self, agent_id, reward, cost_usd, tokens, *, domain=None):
        self.updates.append((agent_id, reward))
        self.dadb.record(agent_id, reward, cost_usd, tokens, domain)


def _learning_team(problems, dadb: AgentDatabase):
    team, strong = _team(problems)
    team.selector = LearningSelector(team.selector, dadb)
    team.dadb = team.selector.dadb
    return team, strong


def _run(out: Path, problems, team, concurrency: int = 3, **run):
    """`run`: the run's other options (`RunOptions`: budget_tokens=…)."""
    config = EvalConfig(dataset="unit", method=parse_method("reso", team.pool), out=out,
                        settings=ReSoSettings().replace({"asking.rule": "fixed"}, mode="train"),
                        command=["reso", "eval"], run=RunOptions(concurrency=concurrency, **run))
    return asyncio.run(run_eval(config, problems, team))


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def _recorded_calls(*outs: Path) -> int:
    return sum(len(step["candidates"]) for out in outs for row in _rows(out) for step in row["steps"])


def test_a_keyed_batch_is_applied_once(dadb_store):
    dadb = dadb_store.open("d")
    updates = [("a", 1.0, 0.1, 10, "algebra"), ("b", 0.0, 0.2, 5, None)]
    assert dadb.record_batch("run/1", updates) is True
    assert dadb.record_batch("run/1", updates) is False
    assert dadb.total_visits() == 2 and dadb.total_visits("algebra") == 1
    assert dadb.applied_keys("run/") == {"run/1"} and dadb.applied_keys("other/") == set()
    with pytest.raises(ValueError, match="finite"):
        dadb.record_batch("run/2", [("a", float("nan"), 0.0, 0, None)])
    assert dadb.applied_keys() == {"run/1"}, "a rejected batch leaves no key behind"
    frozen = dadb_store.open("d", mode="test")
    assert frozen.record_batch("run/3", updates) is False and frozen.total_visits() == 2


def test_a_run_that_learns_once_records_rewards_and_its_owner_applies_them_once(dadb_store):
    problem = _problem(0)
    team, _ = _learning_team([problem], dadb_store.open("d"))
    train = ReSoSettings().replace({"asking.rule": "fixed"}, mode="train")
    learner = Learner.for_run(train, team.selector)
    assert learner.route == "once" and Learner.for_run(ReSoSettings(mode="test"), team.selector).route == "off"
    reso = ReSo.in_run(RunContext(settings=train, team=team, learner=learner))
    result = reso.solve(problem.question, plan=problem.plan, references=problem.subtask_answers)
    updates = learner.pending(result.steps)
    assert updates is not None and updates == result_updates(result.steps)
    assert team.selector.updates == [] and team.dadb.total_visits() == 0, "nothing is written while it runs"
    assert sorted((agent, reward) for agent, reward, *_ in updates) == [
        ("calc", 1.0), ("strong", 1.0), ("strong", 1.0), ("weak", 0.0), ("weak", 1.0)]
    assert learner.apply("run/p0", updates) is True and learner.apply("run/p0", updates) is False
    assert team.dadb.total_visits() == 5
    assert learner.reconcile("run/", [("run/p0", updates), ("run/p1", updates)]) == 1
    assert team.dadb.total_visits() == 10


def test_train_run_counts_every_recorded_call_once_and_a_rerun_adds_nothing(tmp_path, dadb_store):
    problems = [_problem(i) for i in range(6)]
    team, _ = _learning_team(problems, dadb_store.open("d"))
    _run(tmp_path / "out", problems, team)
    rows = _rows(tmp_path / "out")
    assert team.dadb.total_visits() == _recorded_calls(tmp_path / "out") == 6 * 5
    assert all(len(row["dadb_updates"]) == 5 for row in rows)
    assert team.dadb.applied_keys() == {item_key(run_id(tmp_path / "out"), f"p{i}") for i in range(6)}
    _run(tmp_path / "out", problems, team)
    assert team.dadb.total_visits() == 30
    # Every update went through one keyed batch per item, none through the selector's own update.
    assert team.selector.updates == []


class Killed(Exception):
    """The process dying between the results line and the DADB commit.

    An Exception, not KeyboardInterrupt: raised in the worker thread of the commit, a KeyboardInterrupt (which
    a real process only ever gets in its main thread, where `asyncio.run` turns Ctrl-C into cancellation)
    leaves the event loop from inside `asyncio.run`'s own cancellation of the other questions, and their
    LangGraph tasks stay suspended, failing later with "no running event loop" when collected."""


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_crash_between_the_line_and_the_dadb_commit_is_reconciled_on_resume(tmp_path, dadb_store, monkeypatch):
    problems = [_problem(i) for i in range(5)]
    team, strong = _learning_team(problems, dadb_store.open("d"))
    implementation = type(team.dadb)
    original = implementation.record_batch
    calls = {"n": 0}

    def dies_on_the_third(self, key, updates):
        calls["n"] += 1
        if calls["n"] == 3:
            raise Killed("after the line, before the commit")
        return original(self, key, updates)

    monkeypatch.setattr(implementation, "record_batch", dies_on_the_third)
    with pytest.raises(Killed):
        _run(tmp_path / "out", problems, team)
    # The crashed run left no coroutine unfinished: one would fail when collected, and the mark above turns
    # that into this test's failure (collected later, it would also run inside another module's compilation,
    # where CPython 3.11.7's ast is not re-entrant).
    gc.collect()
    written = len(_rows(tmp_path / "out"))
    assert team.dadb.total_visits() < 5 * written, "one written line is not yet in the DADB"
    monkeypatch.setattr(implementation, "record_batch", original)
    calls_before = len(strong.calls)
    _run(tmp_path / "out", problems, team)
    assert team.dadb.total_visits() == _recorded_calls(tmp_path / "out") == 5 * 5
    assert len(strong.calls) - calls_before == 2 * (5 - written), "written items were not asked again"


def test_a_torn_line_runs_again_and_is_counted_once(tmp_path, dadb_store):
    problems = [_problem(i) for i in range(4)]
    team, _ = _learning_team(problems, dadb_store.open("d"))
    _run(tmp_path / "out", problems[:2], team)
    with (tmp_path / "out" / "results.jsonl").open("a") as handle:
        handle.write('{"id": "p2", "dadb_updates": [["strong", 1.0')  # killed mid-write: no commit yet
    _run(tmp_path / "out", problems, team)
    assert sorted(row["id"] for row in _rows(tmp_path / "out")) == ["p0", "p1", "p2", "p3"]
    assert team.dadb.total_visits() == _recorded_calls(tmp_path / "out") == 4 * 5


def test_two_output_folders_sharing_a_dadb_are_both_counted(tmp_path, dadb_store):
    problems = [_problem(i) for i in range(3)]
    team, _ = _learning_team(problems, dadb_store.open("d"))
    _run(tmp_path / "a", problems, team)
    _run(tmp_path / "b", problems, team)
    assert run_id(tmp_path / "a") != run_id(tmp_path / "b")
    assert team.dadb.total_visits() == _recorded_calls(tmp_path / "a", tmp_path / "b") == 2 * 3 * 5


def test_baselines_that_learn_nothing_carry_no_updates(tmp_path, dadb_store):
    problems = [_problem(i) for i in range(2)]
    team, _ = _learning_team(problems, dadb_store.open("d"))
    config = EvalConfig(dataset="unit", method=parse_method("single:weak", team.pool), out=tmp_path / "out",
                        settings=ReSoSettings().replace({"asking.rule": "fixed"}, mode="train"),
                        command=["reso", "eval"], run=RunOptions(concurrency=2))
    asyncio.run(run_eval(config, problems, team))
    assert all("dadb_updates" not in row for row in _rows(tmp_path / "out"))
    assert team.dadb.total_visits() == 0


def test_a_second_writer_of_one_results_file_is_refused(tmp_path):
    from reso.evals.results import ResultsBusyError, ResultsFile

    path = tmp_path / "results.jsonl"
    row = {"id": "a", "correct": True, "status": "done", "usage": {}, "latency_s": 0.0, "steps": []}
    with ResultsFile(path) as first:
        first.append(row)
        with pytest.raises(ResultsBusyError, match="another run is writing"):
            ResultsFile(path)
    with ResultsFile(path) as again:
        assert set(again.done) == {"a"}


def test_a_lost_line_whose_updates_were_applied_reruns_without_learning_twice(tmp_path, dadb_store):
    problems = [_problem(i) for i in range(3)]
    team, strong = _learning_team(problems, dadb_store.open("d"))
    _run(tmp_path / "out", problems, team)
    results = tmp_path / "out" / "results.jsonl"
    lines = results.read_text().splitlines()
    results.write_text("\n".join(line for line in lines if json.loads(line)["id"] != "p1") + "\n")
    calls_before = len(strong.calls)
    _run(tmp_path / "out", problems, team)
    assert len(strong.calls) - calls_before == 2, "only the item whose line was lost runs again"
    assert sorted(row["id"] for row in _rows(tmp_path / "out")) == ["p0", "p1", "p2"]
    # The DADB keeps the first run of p1; its rerun (same number of calls here) is not learned again.
    assert team.dadb.total_visits() == 3 * 5


def test_the_python_api_learns_immediately_and_a_checkpointed_thread_once(tmp_path, dadb_store):
    problem = _problem(0)
    team, _ = _learning_team([problem], dadb_store.open("d"))
    plain = ReSo(ReSoSettings().replace({"asking.rule": "fixed"}, mode="train"), team=team)
    plain.solve(problem.question, plan=problem.plan)
    assert len(team.selector.updates) == 5 and team.dadb.total_visits() == 5, "no checkpoint: immediate"

    saved = ReSo(ReSoSettings().replace({"asking.rule": "fixed"}, mode="train"), team=team,
                 checkpoint_path=tmp_path / "ck.sqlite")
    result = saved.solve(problem.question, plan=problem.plan, thread_id="t")
    assert len(team.selector.updates) == 5, "a checkpointed run does not write as it goes"
    assert team.dadb.total_visits() == 5 + sum(len(step.candidates) for step in result.steps) == 10
    assert {c.domain for step in result.steps for c in step.candidates} == {None}
    saved.solve(problem.question, plan=problem.plan, thread_id="t")
    assert team.dadb.total_visits() == 10, "one thread is learned once"
    saved.solve(problem.question, plan=problem.plan, thread_id="u")
    assert team.dadb.total_visits() == 15
