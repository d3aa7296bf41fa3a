"""The agents' standings in the DADB: what the CRM and the asking policies are shown, read once per
subtask (one trip off the event loop with the coarse stage), and a scorer called where it may run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.pool import pool_from_dict
from reso.agents.selection.selector import Candidate, ReputationSelector
from reso.agents.selection.stats_cache import StatsCache
from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.escalation import FixedK
from reso.graphs.fine_stage import run_fine_stage
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, build_team
from reso.reward.base import Score, ScoreItem, Scorer
from reso.reward.consensus import ConsensusScorer
from tests.engine_fakes import ScriptedAnswerer
from tests.selector_helpers import HASH, CountingDADB

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
    assert standings.reputation("c") == pytest.approx(1.0) and team.model_record("a") == (2.0, 3)


def test_standings_are_read_again_once_the_dadb_changed_and_a_read_one_stays_as_it_was() -> None:
    dadb = CountingDADB(None, mode="train")
    team = _team(dadb, ConsensusScorer())
    before = team.standings()
    assert before is not None and before.model_record("c") == (0.0, 0)
    dadb.record_many([("c", 1.0, 0.0, 10, None)])
    after = team.standings()
    assert after is not None and after.model_record("c") == (1.0, 1) and after.reputation("c") == 1.0
    assert before.model_record("c") == (0.0, 0), "standings handed out earlier do not change under the reader"
    assert team.standings() is not None and dadb.reads == 2, "read once, then once after the change"


def test_without_a_dadb_there_are_no_standings() -> None:
    team = _team(None, ConsensusScorer())
    assert team.standings() is None and team.model_record("a") is None


def test_the_team_and_its_selector_share_one_statistics_cache() -> None:
    team = build_team(ReSoSettings().replace({"selection.embedder": "hash:64"}, mode="train"))
    assert isinstance(team.selector, ReputationSelector) and team.selector.stats is team.stats is not None
    agent = team.pool.ids[0]
    before = team.standings()
    team.selector.update(agent, 1.0, 0.0, 10)
    after = team.standings()
    assert before is not None and after is not None
    assert after.model_record(agent)[1] == before.model_record(agent)[1] + 1, "the selector's write is seen"
    assert before.reputation(agent) == 1.0 and after.reputation(agent) == 1.0


def test_a_selectors_write_reaches_the_teams_standings_without_a_dadb_read() -> None:
    dadb = CountingDADB(None, mode="train")
    team = _team(dadb, ConsensusScorer())
    assert team.stats is None
    stats = StatsCache(dadb, team.pool.ids)
    team = Team(pool=team.pool, models=team.models, selector=ReputationSelector(team.pool, dadb, HASH, stats=stats),
                scorer=team.scorer, dadb=dadb, stats=stats)
    before = team.standings()
    reads = dadb.reads
    team.selector.update("c", 0.0, 0.0, 10)
    after = team.standings()
    assert before is not None and after is not None and dadb.reads == reads
    assert after.model_record("c") == (0.0, 1) and after.reputation("c") == 0.5
    assert before.model_record("c") == (0.0, 0), "standings handed out earlier do not change under the reader"


def test_a_selector_refuses_a_cache_of_another_dadb() -> None:
    team = _team(DADB(None, mode="train"), ConsensusScorer())
    with pytest.raises(ValueError, match="another DADB"):
        ReputationSelector(team.pool, DADB(None, mode="train"), HASH, stats=StatsCache(team.dadb, team.pool.ids))


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
    offered = [Candidate(team.agent(agent_id), 1.0) for agent_id in ("a", "c")]
    run = RunContext(settings=ReSoSettings().replace({"asking.k": 2}), team=team)
    judged = asyncio.run(run_fine_stage(run, offered, FixedK(), prompt=SUBTASK, instruction=SUBTASK,
                                        context_text="", group="0", reference=None, budget=Budget()))
    assert judged.values == ["3", "3"]
    assert (scorer.threads[0] is threading.main_thread()) is not blocking
    assert scorer.reputations == [pytest.approx(0.5), pytest.approx(1.0)], "read from the DADB when not given"
