"""The team behind a run: pool, chat models, selector, CRM scorer and DADB, built once per settings.

Building a team loads an embedder and a FAISS index. Callers build it once (`build_team`, or by hand with
fake models, say) and hand it to the run in its `RunContext`; `team_for` keeps one team per settings
object for the callers that start from settings alone (the CLI, LangGraph Studio, `ReSo(**settings)`), in
a bounded cache (`TeamCache`, `TEAMS`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from reso.agents.adapters.health import Health
from reso.agents.adapters.retry import RetryPolicy
from reso.agents.dadb.base import Mode
from reso.agents.pool import Pool, load_pool
from reso.agents.profiles import Agent, AgentKind
from reso.agents.selection.question_skills import QuestionSkills
from reso.agents.selection.selector import Selector
from reso.agents.selection.stats_cache import Standings, StatsCache
from reso.graphs.escalation import AskingPolicy
from reso.graphs.settings import ReSoSettings
from reso.reward.base import Scorer


@dataclass
class Team:
    """Everything that answers and judges: shared by all questions of a run. `health` keeps agents with a
    failing endpoint out of selection; `retry` says how transient call failures are retried; `asking`, when
    set, decides how many candidates answer instead of the settings (see `reso.graphs.escalation`).

    The team owns the in-memory statistics of its DADB (`stats`), the one copy in the process: its
    selector reads and records through the same cache (`build_team` hands it over), and `standings` reads
    it. A team made by hand without one gets its own."""

    pool: Pool
    models: Mapping[str, BaseChatModel]
    selector: Selector
    scorer: Scorer
    dadb: Any = None
    planner_model: BaseChatModel | None = None
    health: Health = field(default_factory=Health)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    asking: AskingPolicy | None = None
    """Overrides the settings' fine-stage policy (the cascade baseline pins its own)."""
    stats: StatsCache | None = field(default=None, repr=False, compare=False)
    """The DADB's statistics for this pool; None: made from `dadb` when first read."""
    skills: QuestionSkills | None = None
    """Each model's chance on a subtask from its record on the nearest past ones (`AskingConfig.skills`)."""

    def __post_init__(self) -> None:
        if self.stats is not None and self.stats.agent_ids != [agent.id for agent in self.pool]:
            self.stats = None  # another pool's: a team copied with `dataclasses.replace(team, pool=...)`

    def agent(self, agent_id: str) -> Agent:
        return self.pool.get(agent_id)

    def integration_agents(self) -> list[Agent]:
        """The pool's exact tool agents, which answer integration steps on the same footing for every method."""
        return [agent for agent in self.pool if agent.kind == AgentKind.TOOL]

    def standings(self) -> Standings | None:
        """Every agent's overall record in the DADB now, None when there is no DADB. The DADB is read again
        only when it changed since the last call (one version check otherwise), but either may block:
        call this off the event loop and use what it returns on it."""
        if self.dadb is None:
            return None
        if self.stats is None or self.stats.dadb is not self.dadb:  # none yet, or of a DADB since replaced
            self.stats = StatsCache(self.dadb, [agent.id for agent in self.pool])
        return self.stats.standings([agent.model.spec for agent in self.pool])

    def model_record(self, agent_id: str) -> tuple[float, int] | None:
        """(reward sum, visits) of the agent's model over all its roles (they replay or call the same model,
        so the model's record is the better estimate of each), None when there is no DADB."""
        standings = self.standings()
        return standings.model_record(self.agent(agent_id).id) if standings is not None else None


def settings_pool(settings: ReSoSettings) -> Pool:
    """The pool `settings.pool` names, loaded (the default pool when it names none)."""
    from reso.agents.defaults import default_pool_path

    return load_pool(Path(settings.pool) if settings.pool else default_pool_path())


def build_team(settings: ReSoSettings, pool: Pool | None = None) -> Team:
    """Load the pool (unless given: the pool `settings.pool` names, loaded already) and build models,
    selector, scorer and DADB for `settings` (not cached).

    Everything that checks the settings runs before the DADB is opened: opening one in training mode
    creates it (and the selector saves its profile index beside it), so a team refused for another reason
    leaves no DADB behind. In test mode a DADB that does not exist is refused (`open_dadb`).
    """
    from reso.agents.adapters.invoke import models_for_pool
    from reso.agents.adapters.loader import load_chat_model
    from reso.agents.dadb.open import default_db, open_dadb
    from reso.agents.selection.embeddings import load_embedder
    from reso.agents.selection.policies import SelectorParts, selection_policy
    from reso.reward.registry import build_scorer

    if pool is None:
        pool = settings_pool(settings)
    selection = settings.selection
    policy = selection_policy(selection.policy)
    # A frozen DADB learns nothing from exploring, so test mode exploits unless told otherwise.
    config = selection.exploiting() if settings.mode == Mode.TEST else selection
    embedder = load_embedder(selection.embedder) if policy.uses_profiles else None
    models = models_for_pool(pool)
    scorer = build_scorer(settings.reward.scorer)
    planner_model = None
    if settings.plan.planner_model:
        from reso.agents.profiles import ModelSpec

        planner_model = load_chat_model(ModelSpec(spec=settings.plan.planner_model))
    skills = QuestionSkills.load(settings.asking.skills, embedder) if settings.asking.skills else None
    # No DADB named: the trained one shipped for the default pool in a test run, else an empty one in memory.
    dadb = open_dadb(default_db(settings.db, settings.pool, settings.mode) or None, mode=settings.mode)
    stats = StatsCache(dadb, pool.ids)
    selector = policy.build(SelectorParts(pool=pool, dadb=dadb, config=config, stats=stats, embedder=embedder,
                                          seed=settings.seed, answer_value_usd=settings.answer_value_usd))
    return Team(pool=pool, models=models, selector=selector, scorer=scorer, dadb=dadb, stats=stats,
                planner_model=planner_model, health=Health.for_pool(pool), skills=skills)


def holds_learning(settings: ReSoSettings) -> bool:
    """Whether a team for `settings` learns into a DADB that lives only in memory (training, no DADB named)."""
    return settings.mode == Mode.TRAIN and not settings.db


class TeamCache:
    """The teams built for settings, the `size` most recently used kept (least recently used forgotten first).

    A team holds chat models, an embedder, a FAISS index and a DADB connection, so a process that runs
    many settings (the main job runs twenty) must not keep them all. A forgotten team is not closed: whoever
    took it may still be running on it, and its DADB connection closes when the last user lets go of it.
    A training team whose DADB lives only in memory is never forgotten (`holds_learning`): what it learned
    is nowhere else, and asking again for its settings must find it; such teams may take the cache past
    `size`.
    """

    def __init__(self, size: int, build: Callable[[ReSoSettings, Pool | None], Team] | None = None) -> None:
        if size < 1:
            raise ValueError(f"a team cache holds at least one team, not {size}")
        self.size = size
        self._build = build or build_team
        self._teams: OrderedDict[ReSoSettings, Team] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, settings: ReSoSettings, pool: Pool | None = None) -> Team:
        """The team for `settings`, built now unless kept (`pool`: see `build_team`)."""
        with self._lock:
            team = self._teams.get(settings)
            if team is None:
                team = self._teams[settings] = self._build(settings, pool)
                forgettable = [kept for kept in self._teams if not holds_learning(kept)]
                for kept in forgettable[:max(0, len(self._teams) - self.size)]:
                    del self._teams[kept]  # least recently used first
            else:
                self._teams.move_to_end(settings)
            return team


TEAMS_KEPT = 16
"""How many teams `team_for` keeps. A rebuilt team starts its selector's random streams afresh, so a caller
that asks again for a forgotten team may get other figures. The main job (`reso demo`) builds 20 teams in
one process and asks again for one at most 8 others later (measured on this version), so it never gets a
rebuilt team; the teams it is done with are let go."""

TEAMS = TeamCache(TEAMS_KEPT)
"""The process's teams by settings, for the callers that start from settings alone (see `team_for`)."""


def team_for(settings: ReSoSettings, pool: Pool | None = None) -> Team:
    """The team built for `settings` (frozen, so hashable), built on first use and kept in `TEAMS` while it
    is among the `TEAMS_KEPT` most recently used; `pool`, when given, is the pool `settings.pool` names,
    loaded already (`build_team`)."""
    return TEAMS.get(settings, pool)
