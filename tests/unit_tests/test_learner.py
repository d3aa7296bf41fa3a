"""The run's learner: the one place that decides whether rewards reach the DADB as each subtask finishes,
once per question through the run's owner, or not at all (test mode)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from reso.agents.dadb.base import Update
from reso.agents.dadb.sqlite import DADB
from reso.graphs.context import RunContext
from reso.graphs.learning import Learner, LearnOnce
from reso.graphs.run_records import CandidateRecord, StepRecord
from reso.graphs.settings import ReSoSettings

TRAIN, TEST = ReSoSettings(mode="train"), ReSoSettings(mode="test")


@dataclass
class _Selector:
    dadb: DADB | None = None
    updates: list[tuple[str, float, str | None]] = field(default_factory=list)

    def update(self, agent_id: str, reward: float, cost_usd: float, tokens: int, *, domain: str | None = None) -> None:
        self.updates.append((agent_id, reward, domain))


def _steps() -> list[StepRecord]:
    candidates = [CandidateRecord(agent_id="a", model="fake:m", role="r", answer="4", value="4", reward=1.0,
                                  input_tokens=3, output_tokens=4, cost_usd=0.5, domain="math"),
                  CandidateRecord(agent_id="b", model="fake:m", role="r", answer="", value=None, reward=None)]
    return [StepRecord(id="final", instruction="2 + 2?", depends_on=[], status="done", agent="a", answer="4",
                       value="4", candidates=candidates)]


def test_a_run_context_learns_as_it_goes_in_training_and_not_at_all_in_test_mode() -> None:
    assert RunContext(settings=TRAIN).learner.route == "as_they_go"
    assert RunContext(settings=TEST).learner.route == "off" and not RunContext(settings=TEST).learner.rewards
    once = Learner("once", LearnOnce(DADB(None, mode="train")))
    assert RunContext(settings=TEST, learner=once).learner.route == "off", "test mode learns nothing"
    assert RunContext(settings=TRAIN, learner=once).learner is once


def test_a_run_learns_once_where_its_selector_learns_into_a_dadb() -> None:
    dadb = DADB(None, mode="train")
    learner = Learner.for_run(TRAIN, _Selector(dadb))
    assert learner.route == "once" and learner.once is not None and learner.once.dadb is dadb
    assert Learner.for_run(TRAIN, _Selector()).route == "as_they_go", "a baseline without a DADB"
    assert Learner.for_run(TRAIN, _Selector(DADB(None, mode="test"))).route == "as_they_go"
    assert Learner.for_run(TEST, _Selector(dadb)).route == "off"
    assert Learner().once_where_possible(TRAIN, _Selector(dadb)).route == "once"
    assert learner.once_where_possible(TRAIN, _Selector(DADB(None, mode="train"))) is learner


def test_only_a_learner_that_goes_as_it_goes_writes_through_the_selector() -> None:
    updates: list[Update] = [("a", 1.0, 0.5, 7, "math")]
    selector = _Selector()
    Learner().update(selector, updates)
    assert selector.updates == [("a", 1.0, "math")]
    Learner("once", LearnOnce(DADB(None, mode="train"))).update(selector, updates)
    Learner("off").update(selector, updates)
    assert len(selector.updates) == 1


def test_a_learn_once_run_leaves_its_questions_updates_to_apply_once() -> None:
    dadb = DADB(None, mode="train")
    learner = Learner.for_run(TRAIN, _Selector(dadb))
    pending = learner.pending(_steps())
    assert pending == [("a", 1.0, 0.5, 7, "math")], "every candidate that earned a reward"
    assert learner.apply("run/q", pending) is True and learner.apply("run/q", pending) is False
    assert dadb.total_visits() == 1
    assert Learner().pending(_steps()) is None and Learner().apply("run/q", []) is False
    assert Learner().reconcile("run/", [("run/r", pending)]) == 0 and dadb.total_visits() == 1


def test_a_learner_learns_once_exactly_when_given_a_learn_once() -> None:
    with pytest.raises(ValueError):
        Learner("once")
    with pytest.raises(ValueError):
        Learner("as_they_go", LearnOnce(DADB(None, mode="train")))
