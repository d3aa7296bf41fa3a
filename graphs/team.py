"""The team behind a run: pool, chat models, selector, CRM scorer and DADB, built once per settings.

Building a team loads an embedder and a FAISS index. Callers build it once (`build_team`, or by hand with
fake models, say) and hand it to the run in its `RunContext`; `team_for` keeps one team per settings
object for the callers that start from settings alone (the CLI, LangGraph Studio, `ReSo(**settings)`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from reso.agents.adapters.health import Health
from reso.agents.adapters.retry import RetryPolicy
from reso.agents.dadb.base import Mode
from reso.agents.pool import Pool, load_pool
from reso.agents.profiles import Agent, AgentKind
from reso.agents.selection.selector import Selector
from reso.agents.selection.stats_cache import Standings, StatsCache
from reso.graphs.escalation import AskingPolicy
from reso.graphs.settings import ReSoSettings, SelectionPolicy
from reso.reward.base import Scorer


@dataclass
class Team:
    """Everything that answers and judges: shared by all questions of a run. `health` keeps agents with a
    failing endpoint out of selection; `retry` says how transient call failures are retried; `asking`, when
    set, decides how many candidates answer instead of the settings (see `reso.graphs.escalation`)."""

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
    _stats: StatsCache | None = field(default=None, init=False, repr=False, compare=False)

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
        if self._stats is None:
            self._stats = StatsCache(self.dadb, [agent.id for agent in self.pool])
        return self._stats.standings([agent.model.spec for agent in self.pool])

    def model_record(self, agent_id: str) -> tuple[float, int] | None:
        """(reward sum, visits) of the agent's model over all its roles (they replay or call the same model,
        so the model's record is the better estimate of each), None when there is no DADB."""
        standings = self.standings()
        return standings.model_record(self.agent(agent_id).id) if standings is not None else None

    def reputation(self, agent_id: str) -> float | None:
        """The agent's smoothed mean reward from the DADB (None when there is no DADB)."""
        standings = self.standings()
        return standings.reputation(agent_id) if standings is not None else None


_TEAMS: dict[ReSoSettings, Team] = {}
_TEAMS_LOCK = threading.Lock()


def settings_pool(settings: ReSoSettings) -> Pool:
    """The pool `settings.pool` names, loaded (the embedded default pool when it names none)."""
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
    from reso.agents.dadb.open import open_dadb
    from reso.agents.selection.embeddings import load_embedder
    from reso.agents.selection.selector import RandomSelector, SelectorConfig, UCBSelector
    from reso.reward.registry import build_scorer

    if pool is None:
        pool = settings_pool(settings)
    # A frozen DADB learns nothing from exploring, so test mode exploits unless told otherwise.
    exploit = settings.mode == Mode.TEST and not settings.explore_when_frozen
    config = (SelectorConfig(k=settings.k, seed=settings.seed) if settings.selection == SelectionPolicy.RANDOM else
              SelectorConfig(top_m=settings.top_m, k=settings.k, variant=settings.ucb_variant,
                             cost_weight=settings.cost_weight, seed=settings.seed,
                             exploration_c=0.0 if exploit else settings.exploration))
    embedder = load_embedder(settings.embedder) if settings.selection != SelectionPolicy.RANDOM else None
    models = models_for_pool(pool)
    scorer = build_scorer(settings.scorer)
    planner_model = None
    if settings.planner_model:
        from reso.agents.profiles import ModelSpec

        planner_model = load_chat_model(ModelSpec(spec=settings.planner_model))
    dadb = open_dadb(settings.db or None, mode=settings.mode)
    selector: Selector = (RandomSelector(pool, dadb, config=config) if embedder is None else
                          UCBSelector(pool, dadb, embedder, config))
    return Team(pool=pool, models=models, selector=selector, scorer=scorer, dadb=dadb,
                planner_model=planner_model, health=Health.for_pool(pool))


def team_for(settings: ReSoSettings, pool: Pool | None = None) -> Team:
    """The team built for `settings` (frozen, so hashable), built on first use and kept for the process;
    `pool`, when given, is the pool `settings.pool` names, loaded already (`build_team`)."""
    with _TEAMS_LOCK:
        if settings not in _TEAMS:
            _TEAMS[settings] = build_team(settings, pool)
        return _TEAMS[settings]
