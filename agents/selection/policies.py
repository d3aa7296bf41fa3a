"""Selection policies by name: the coarse stage a team is built with (`SelectorConfig.policy`).

A policy turns what the team has (`SelectorParts`: pool, DADB, the `selection` settings, the statistics cache,
the seed, the value of a right answer and, when it reads profiles, the embedder) into a `Selector`. ReSo's
bandit over the profile index (`reputation`) and the paper's random ablation (`random`) are registered here;
another module adds its own with `register_selection_policy`, and `selection.policy` then names it (see "How to
extend" in docs/architecture.md).

The selectors are imported when a policy builds one, so naming a policy loads neither FAISS nor an embedder.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reso.agents.dadb.base import AgentDatabase
    from reso.agents.pool import Pool
    from reso.agents.selection.config import SelectorConfig
    from reso.agents.selection.embeddings import Embedder
    from reso.agents.selection.selector import Selector
    from reso.agents.selection.stats_cache import StatsCache

__all__ = ["SelectionPolicy", "SelectorParts", "register_selection_policy", "selection_policy",
           "selection_policy_names"]


@dataclass(frozen=True)
class SelectorParts:
    """What a policy may build its selector from."""

    pool: Pool
    dadb: AgentDatabase
    config: SelectorConfig
    stats: StatsCache
    embedder: Embedder | None = None
    """The `selection.embedder`, loaded when the policy reads profiles (`SelectionPolicy.uses_profiles`)."""
    seed: int | None = None
    answer_value_usd: float = math.inf


@dataclass(frozen=True)
class SelectionPolicy:
    """A named way to build the coarse stage."""

    build: Callable[[SelectorParts], Selector]
    uses_profiles: bool = True
    """Whether it reads the profile index, so that the team loads the embedder for it."""


def _reputation(parts: SelectorParts) -> Selector:
    from reso.agents.selection.selector import ReputationSelector

    if parts.embedder is None:
        raise ValueError("the reputation policy reads profiles: it needs an embedder")
    return ReputationSelector(parts.pool, parts.dadb, parts.embedder, parts.config, stats=parts.stats,
                              seed=parts.seed, answer_value_usd=parts.answer_value_usd)


def _random(parts: SelectorParts) -> Selector:
    from reso.agents.selection.selector import RandomSelector

    return RandomSelector(parts.pool, parts.dadb, config=parts.config, seed=parts.seed)


_POLICIES: dict[str, SelectionPolicy] = {
    "reputation": SelectionPolicy(_reputation),
    "random": SelectionPolicy(_random, uses_profiles=False),
}


def register_selection_policy(name: str, build: Callable[[SelectorParts], Selector], *,
                              uses_profiles: bool = True) -> None:
    """Make `selection.policy: NAME` build the selector `build` returns (a name registered twice is replaced)."""
    if not name or not name.strip():
        raise ValueError("a selection policy needs a name")
    _POLICIES[name] = SelectionPolicy(build, uses_profiles=uses_profiles)


def selection_policy_names() -> tuple[str, ...]:
    """The policies registered so far, in registration order."""
    return tuple(_POLICIES)


def selection_policy(name: str) -> SelectionPolicy:
    """The policy registered as `name`.

    Raises:
        ValueError: Naming `selection.policy` and the registered names, for one that is not registered.
    """
    try:
        return _POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown selection.policy {name!r}; choose one of "
                         f"{', '.join(selection_policy_names())}") from None
