"""The agents' standings in the DADB: what the CRM and the asking policies are shown, read once per
subtask (one trip off the event loop with the coarse stage), and a scorer called where it may run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.pool import pool_from_dict
from reso.agents.selection.selector import Candidate
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.escalation import FixedK
from reso.graphs.fine_stage import run_fine_stage
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.consensus import ConsensusScorer
from tests.engine_fakes import ScriptedAnswerer

SUBTASK = "Step A: how many apples?"


def _team(dadb: DADB | None, scorer: Scorer) -> Team:
    # Two roles on model m1 (a, b), one on m2 (c).
    pool = pool_from_dict({"name": "standings", "agents": [
        {"id": agent_id, "model": {"spec": spec, "price_in": 1.0, "price_out": 2.0}, "role": "Algebra", "profile": "Solves algebra."}
        for agent_id, spec in (("a", "fake:m1"), ("b", "fake:m1"), ("c", "fake:m2"))]})
    models = {agent_id: ScriptedAnswerer(answers={SUBTASK: "\\boxed{3}"}, calls=[]) for agent_id in "abc"}
    return Team(pool=pool, models=models, selector=None, scorer=scorer, dadb=dadb)  # type: ignore[arg-type]


def test_standings_give_each_agent_its_reputation_and_its_models_record() -> None:
    dadb = DADB(None, mode="train")
    dadb.record_many([("a", 1.0, 0.0, 10, None), ("a", 0.0, 0.0, 10, None), ("b", 1.0, 0.0, 10, "algebra"),
                      ("c", 1.0, 0.0, 10, None)])
    team = _team(dadb, ConsensusScorer())
    standings = team.standings()
    assert standings is not None
    assert standings.reputation("a") == pytest.approx((1 + 1) / (2 + 1))
    assert standings.reputation("b") == pytest.approx((1 + 1) / (1 + 1))
    assert standings.model_record("a") == standings.model_record("b") == (2.0, 3)
    assert standings.model_record("c") == (1.0, 1)
    assert team.reputation("c") == pytest.approx(1.0) and team.model_record("a") == (2.0, 3)


def test_standings_are_read_again_once_the_dadb_changed_and_a_read_one_stays_as_it_was() -> None:
    dadb = DADB(None, mode="train")
    team = _team(dadb, ConsensusScorer())
    before = team.standings()
    assert before is not None and before.model_record("c") == (0.0, 0)
    dadb.record_many([("c", 1.0, 0.0, 10, None)])
    after = team.standings()
    assert after is not None and after.model_record("c") == (1.0, 1) and after.reputation("c") == 1.0
    assert before.model_record("c") == (0.0, 0), "standings handed out earlier do not change under the reader"
    assert team.standings() is not None and team._stats is not None and team._stats.reloads == 2


def test_without_a_dadb_there_are_no_standings() -> None:
    team = _team(None, ConsensusScorer())
    assert team.standings() is None and team.reputation("a") is None and team.model_record("a") is None


class _Recording(Scorer):
    """Scores 1 and notes the thread it ran on and the reputations it was shown."""

    name = "recording"

    def __init__(self, blocking: bool) -> None:
        self.blocking = blocking
        self.threads: list[threading.Thread] = []
        self.reputations: list[float | None] = []

    def score_detailed(self, items: Sequence[ScoreItem]) -> list[Score]:
        self.threads.append(threading.current_thread())
        self.reputations.extend(item.reputation for item in items)
        return [Score(1.0) for _ in items]


@pytest.mark.parametrize("blocking", [True, False])
def test_a_blocking_scorer_runs_off_the_event_loop_and_a_computing_one_in_place(blocking: bool) -> None:
    dadb = DADB(None, mode="train")
    dadb.record_many([("a", 0.0, 0.0, 10, None)])
    scorer = _Recording(blocking)
    team = _team(dadb, scorer)
    offered = [Candidate(team.agent(agent_id), 1.0, {}) for agent_id in ("a", "c")]
    run = RunContext(settings=ReSoSettings(k=2), team=team)
    judged = asyncio.run(run_fine_stage(run, offered, FixedK(), prompt=SUBTASK, instruction=SUBTASK,
                                        context_text="", group="0", reference=None, budget=Budget()))
    assert judged.values == ["3", "3"]
    assert (scorer.threads[0] is threading.main_thread()) is not blocking
    assert scorer.reputations == [pytest.approx(0.5), pytest.approx(1.0)], "read from the DADB when not given"
