"""A benchmark's roster (`reso.evals.jobs.benchmark_pool`): a replay model that records too few of the
training composites' questions is left out of that benchmark's pool file, one that records them stays, tools
and live models always stay; and `reso demo`'s recorded baselines add vote:5 when the roster has five
models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reso.agents.pool import Pool, load_pool, pool_from_dict
from reso.evals.datasets.problem import DatasetError, Problem
from reso.evals.jobs.baselines import recorded_baselines
from reso.evals.jobs.benchmark_pool import asked_questions, benchmark_roster, recorded_shares


def _recordings(path: Path, prefix: str, models: dict[str, int]) -> Path:
    """A replay file of ten questions `prefix-0`…`prefix-9`; each model answers the first N of them."""
    rows = [{"id": f"{prefix}-{i}", "question": f"{prefix} question {i}?", "answer": "1",
             "responses": {m: "1" for m, n in models.items() if i < n},
             "correct": {m: True for m, n in models.items() if i < n}} for i in range(10)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _composites(prefix: str, count: int = 10) -> list[Problem]:
    """Composites of two sub-questions each, asking `prefix-0`…`prefix-{count-1}`."""
    return [Problem(f"c{i}", "q", "1", meta={"step_question_ids": {"0": f"{prefix}-{i}",
                                                                   "1": f"{prefix}-{(i + 1) % count}"}})
            for i in range(count)]


@pytest.fixture
def pool_file(tmp_path: Path) -> Path:
    """Model `both` records every question of both files, `mathonly` every math question and no gsm one,
    `patchy` 8 of the 10 math questions and all gsm ones; a live model and the calculator besides."""
    math = _recordings(tmp_path / "math.jsonl", "m", {"both": 10, "mathonly": 10, "patchy": 8})
    gsm = _recordings(tmp_path / "gsm.jsonl", "g", {"both": 10, "patchy": 10})
    path = tmp_path / "world.yaml"
    path.write_text(
        "name: world\nmodels:\n"
        "  - {spec: 'replay:math.jsonl,gsm.jsonl#both', price_in: 1, price_out: 1}\n"
        "  - {spec: 'replay:math.jsonl#mathonly', price_in: 1, price_out: 1}\n"
        "  - {spec: 'replay:math.jsonl,gsm.jsonl#patchy', price_in: 1, price_out: 1}\n"
        "  - {spec: 'openai:gpt-live', price_in: 1, price_out: 1}\n"
        "roles: [Algebra, Arithmetic Word Problems]\n"
        "agents:\n  - {id: tool/calculator, model: {spec: 'tool:calculator'}, role: Exact arithmetic, "
        "profile: Exact arithmetic, domain: integration}\n", encoding="utf-8")
    assert math.exists() and gsm.exists()
    return path


def _models(pool: Pool) -> list[str]:
    return list(dict.fromkeys(agent.model.model_name for agent in pool))


def test_each_replay_model_s_share_of_the_asked_questions_is_counted_by_recording_id(pool_file: Path) -> None:
    pool = load_pool(pool_file)
    assert asked_questions(_composites("m")) == {f"m-{i}" for i in range(10)}
    shares = recorded_shares(pool, asked_questions(_composites("g")))
    assert {spec.rsplit("#", 1)[1]: share for spec, share in shares.items()} == {
        "both": 1.0, "mathonly": 0.0, "patchy": 1.0}
    # Ids no file of the pool records say nothing about a model.
    assert recorded_shares(pool, {"x-1", "x-2"}) == {}


def test_a_model_without_a_benchmark_s_recordings_is_left_out_of_it_and_stays_in_the_other(
        pool_file: Path, tmp_path: Path) -> None:
    gsm = benchmark_roster(str(pool_file), _composites("g"), tmp_path / "gsm")
    assert gsm.left_out == {"mathonly": 0.0}
    assert gsm.pool == str(tmp_path / "gsm" / "pool.yaml")
    written = load_pool(gsm.pool)  # loads from the benchmark's folder: its replay paths are absolute
    assert _models(written) == ["both", "patchy", "gpt-live", "calculator"]
    assert [a.id for a in written if a.kind == "tool"] == ["tool/calculator"]
    assert "mathonly: 0.0%" in Path(gsm.pool).read_text(encoding="utf-8")
    # On the math benchmark, patchy records 8 of the 10 questions: below 90 %, so it is left out there.
    math = benchmark_roster(str(pool_file), _composites("m"), tmp_path / "math")
    assert math.left_out == {"patchy": 0.8}
    assert _models(load_pool(math.pool)) == ["both", "mathonly", "gpt-live", "calculator"]


def test_a_roster_that_leaves_no_one_out_is_the_world_pool_itself(pool_file: Path, tmp_path: Path) -> None:
    folder = tmp_path / "math"
    benchmark_roster(str(pool_file), _composites("m"), folder)
    assert (folder / "pool.yaml").exists()
    kept = benchmark_roster(str(pool_file), _composites("m"), folder, minimum=0.8)
    assert kept.pool == str(pool_file) and kept.left_out == {}
    assert not (folder / "pool.yaml").exists()  # the earlier roster is not left there to mislead
    assert benchmark_roster(str(pool_file), _composites("m"), folder, minimum=0.0).pool == str(pool_file)


def test_a_benchmark_no_replay_model_records_is_refused(tmp_path: Path) -> None:
    _recordings(tmp_path / "gsm.jsonl", "g", {"a": 10, "b": 2})
    path = tmp_path / "only.yaml"
    path.write_text("models:\n  - {spec: 'replay:gsm.jsonl#b', price_in: 1, price_out: 1}\nroles: [Algebra]\n",
                    encoding="utf-8")
    with pytest.raises(DatasetError, match="no model of the pool records 90%"):
        benchmark_roster(str(path), _composites("g"), tmp_path / "out")


class _RecordedTeam:
    """What the recorded baselines read of a team: its pool, and each model's training record (reward sum,
    visits); the first model listed has the best record."""

    def __init__(self, count: int) -> None:
        self.pool = pool_from_dict({
            "models": [{"spec": f"openai:model-{i}", "price_in": 10.0 - i, "price_out": 10.0 - i}
                       for i in range(count)],
            "roles": ["Algebra"]})
        self.records = {f"model-{i}/algebra": (10.0 - i, 10) for i in range(count)}

    def model_record(self, agent_id: str) -> tuple[float, int]:
        return self.records[agent_id]

    def agent(self, agent_id: str):
        return self.pool.get(agent_id)


@pytest.mark.parametrize(("count", "votes"), [(5, ["vote:3", "vote:5"]), (6, ["vote:3", "vote:5"]),
                                              (4, ["vote:3"]), (3, ["vote:3"])])
def test_vote_5_joins_vote_3_when_the_roster_has_five_models(count: int, votes: list[str]) -> None:
    notes: list[str] = []
    methods = recorded_baselines(_RecordedTeam(count), notes.append)  # type: ignore[arg-type]
    assert methods[:-1] == votes and methods[-1].startswith("cascade:") and notes == []


def test_two_models_make_no_vote_and_say_why() -> None:
    notes: list[str] = []
    assert recorded_baselines(_RecordedTeam(2), notes.append) == []  # type: ignore[arg-type]
    assert notes == ["baseline left out: vote:3 needs 3 models; pool 'pool' has 2"]
