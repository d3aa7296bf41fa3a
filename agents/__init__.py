"""The agents layer: who can answer a subtask, how they are called, and how they are chosen.

- Who, at the top: agent profiles and pools (`Agent`, `ModelSpec`, `Pool`, `load_pool`; `profiles.py`,
  `pool.py`, `pool_source.py`) and the embedded defaults (`defaults.py`, the package data in `data/`).
- Calling, `adapters/`: their chat models (`load_chat_model`: hosted and OpenAI-compatible endpoints, local
  checkpoints, offline replay of recorded answers, exact tools), and `call_agent`, which turns one call into
  an `AgentAnswer` (tokens, cost, latency, and on failure its `FailureKind`), retried under a `RetryPolicy`,
  with a circuit breaker per endpoint (`Health`).
- Choosing, `selection/`: the profile embedder and FAISS index, the scores and the selectors
  (`ReputationSelector`, `RandomSelector`, all implementing `Selector`).
- Remembering, `dadb/`: the DADB of every agent's statistics (`AgentDatabase`, `open_dadb`) on SQLite or
  PostgreSQL.

Public names are imported on first use, so `import reso.agents` loads no model library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.agents.adapters.answers import AgentAnswer
    from reso.agents.adapters.failures import FailureKind
    from reso.agents.adapters.health import Health
    from reso.agents.adapters.invoke import call_agent
    from reso.agents.adapters.loader import load_chat_model
    from reso.agents.adapters.retry import RetryPolicy
    from reso.agents.dadb.base import AgentDatabase
    from reso.agents.dadb.open import open_dadb
    from reso.agents.pool import Pool, PoolError, load_pool
    from reso.agents.profiles import Agent, ModelSpec
    from reso.agents.selection.config import SelectorConfig
    from reso.agents.selection.embeddings import Embedder, load_embedder
    from reso.agents.selection.index import ProfileIndex
    from reso.agents.selection.selector import Candidate, RandomSelector, ReputationSelector, Selector

__all__ = [
    "Agent",
    "AgentAnswer",
    "AgentDatabase",
    "Candidate",
    "Embedder",
    "FailureKind",
    "Health",
    "ModelSpec",
    "Pool",
    "PoolError",
    "ProfileIndex",
    "RandomSelector",
    "ReputationSelector",
    "RetryPolicy",
    "Selector",
    "SelectorConfig",
    "call_agent",
    "load_chat_model",
    "load_embedder",
    "load_pool",
    "open_dadb",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "adapters.answers": ["AgentAnswer"],
    "dadb.base": ["AgentDatabase"],
    "dadb.open": ["open_dadb"],
    "selection.embeddings": ["Embedder", "load_embedder"],
    "adapters.failures": ["FailureKind"],
    "adapters.health": ["Health"],
    "selection.index": ["ProfileIndex"],
    "adapters.invoke": ["call_agent"],
    "adapters.loader": ["load_chat_model"],
    "pool": ["Pool", "PoolError", "load_pool"],
    "profiles": ["Agent", "ModelSpec"],
    "adapters.retry": ["RetryPolicy"],
    "selection.config": ["SelectorConfig"],
    "selection.selector": ["Candidate", "RandomSelector", "ReputationSelector", "Selector"],
})
