"""Who answers a subtask: the two-stage selector and what it reads.

The coarse stage embeds the subtask (`embeddings.py`; optionally a model-written target profile,
`target_profile.py`), retrieves the most similar agent profiles from a FAISS index (`index.py`) and scores
them (`scoring.py`, with `posterior.py`'s Beta posteriors for Thompson sampling and KL-UCB) from DADB
statistics mirrored in memory (`stats_cache.py`); `selector.py` returns the best `Candidate`s
(`UCBSelector`, `RandomSelector`, both implementing `Selector`).

Public names are imported on first use, so importing the package loads neither FAISS nor an embedding model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.agents.selection.embeddings import Embedder, load_embedder
    from reso.agents.selection.index import ProfileIndex, profile_index_for_pool
    from reso.agents.selection.posterior import beta_posterior, kl_upper_bound, thompson_belief
    from reso.agents.selection.scoring import score_components
    from reso.agents.selection.selector import (
        Candidate,
        RandomSelector,
        Selector,
        SelectorConfig,
        UCBSelector,
    )
    from reso.agents.selection.stats_cache import Standings, StatsCache
    from reso.agents.selection.target_profile import TargetProfileWriter

_EXPORTS: dict[str, str] = {
    "Embedder": "reso.agents.selection.embeddings",
    "load_embedder": "reso.agents.selection.embeddings",
    "ProfileIndex": "reso.agents.selection.index",
    "profile_index_for_pool": "reso.agents.selection.index",
    "beta_posterior": "reso.agents.selection.posterior",
    "kl_upper_bound": "reso.agents.selection.posterior",
    "thompson_belief": "reso.agents.selection.posterior",
    "score_components": "reso.agents.selection.scoring",
    "Candidate": "reso.agents.selection.selector",
    "RandomSelector": "reso.agents.selection.selector",
    "Selector": "reso.agents.selection.selector",
    "SelectorConfig": "reso.agents.selection.selector",
    "UCBSelector": "reso.agents.selection.selector",
    "Standings": "reso.agents.selection.stats_cache",
    "StatsCache": "reso.agents.selection.stats_cache",
    "TargetProfileWriter": "reso.agents.selection.target_profile",
}

__all__ = [
    "Candidate",
    "Embedder",
    "ProfileIndex",
    "RandomSelector",
    "Selector",
    "SelectorConfig",
    "Standings",
    "StatsCache",
    "TargetProfileWriter",
    "UCBSelector",
    "beta_posterior",
    "kl_upper_bound",
    "load_embedder",
    "profile_index_for_pool",
    "score_components",
    "thompson_belief",
]


def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562), so importing the package loads none of its heavy dependencies.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
