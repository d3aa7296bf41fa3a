"""The process's team cache: one team per settings, the most recently used kept up to a documented bound,
the least recently used forgotten first, and a forgotten team left working for whoever holds it."""

from __future__ import annotations

import pytest

from reso.agents.dadb.sqlite import DADB
from reso.agents.pool import Pool
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import TEAMS, TEAMS_KEPT, Team, TeamCache, team_for


class _Builds:
    """Builds stand-in teams (only their DADB matters here) and counts the builds per settings."""

    def __init__(self) -> None:
        self.built: list[ReSoSettings] = []
        self.dadbs: list[DADB] = []

    def __call__(self, settings: ReSoSettings, pool: Pool | None) -> Team:
        self.built.append(settings)
        self.dadbs.append(DADB(None, mode="train"))
        return Team(pool=Pool([]), models={}, selector=None, scorer=None, dadb=self.dadbs[-1])  # type: ignore[arg-type]


def _settings(seed: int) -> ReSoSettings:
    return ReSoSettings(seed=seed)


def test_a_team_is_built_once_per_settings_while_kept() -> None:
    builds = _Builds()
    cache = TeamCache(2, builds)
    first = cache.get(_settings(0))
    assert cache.get(_settings(0)) is first and cache.get(ReSoSettings(seed=0)) is first
    assert builds.built == [_settings(0)]


def test_the_least_recently_used_team_is_forgotten_past_the_bound() -> None:
    builds = _Builds()
    cache = TeamCache(2, builds)
    a, _ = cache.get(_settings(0)), cache.get(_settings(1))
    assert cache.get(_settings(0)) is a  # 0 is now the most recently used, so 1 goes first
    cache.get(_settings(2))
    assert cache.get(_settings(0)) is a and len(builds.built) == 3, "0 is kept"
    cache.get(_settings(1))
    assert builds.built.count(_settings(1)) == 2, "a forgotten team is built again when asked for"


def test_a_forgotten_team_stays_usable() -> None:
    builds = _Builds()
    cache = TeamCache(1, builds)
    forgotten = cache.get(_settings(0))
    cache.get(_settings(1))
    forgotten.dadb.record("a", 1.0, 0.0, 1)  # whoever took it may still run on it
    assert forgotten.dadb.total_visits() == 1
    assert cache.get(_settings(0)) is not forgotten and len(builds.built) == 3


def test_a_cache_holds_at_least_one_team() -> None:
    with pytest.raises(ValueError, match="at least one"):
        TeamCache(0)


def test_team_for_keeps_its_teams_in_the_bounded_process_cache() -> None:
    assert TEAMS.size == TEAMS_KEPT
    settings = ReSoSettings().replace({"selection.embedder": "hash:64"}, seed=12345)
    team = team_for(settings)
    assert team_for(settings) is team and TEAMS.get(settings) is team


def test_a_training_team_whose_dadb_lives_only_in_memory_is_never_forgotten() -> None:
    builds = _Builds()
    cache = TeamCache(1, builds)
    learning = ReSoSettings(mode="train", seed=7)
    learner = cache.get(learning)
    learner.dadb.record("a", 1.0, 0.0, 1)
    cache.get(_settings(0)), cache.get(_settings(1))
    # What it learned is nowhere else: asking again finds the same team, its record intact.
    assert cache.get(learning) is learner and learner.dadb.total_visits() == 1
    assert builds.built.count(learning) == 1
    # The bound still holds for the others: the test-mode team of seed 0 was forgotten for seed 1's.
    cache.get(_settings(0))
    assert builds.built.count(_settings(0)) == 2
    # A training team with a DADB file named keeps what it learned in the file: it may be forgotten.
    on_file = ReSoSettings(mode="train", seed=8, db="somewhere.sqlite")
    cache.get(on_file), cache.get(_settings(2))
    cache.get(on_file)
    assert builds.built.count(on_file) == 2
