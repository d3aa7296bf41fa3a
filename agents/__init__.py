"""The agents layer: who can answer a subtask, how they are called, and how they are chosen.

- Who, at the top: agent profiles and pools (`Agent`, `ModelSpec`, `Pool`, `load_pool`; `profiles.py`,
  `pool.py`, `pool_source.py`) and the embedded defaults (`defaults.py`, the package data in `data/`).
- Calling, `adapters/`: their chat models (`load_chat_model`: hosted and OpenAI-compatible endpoints, local
  checkpoints, offline replay of recorded answers, exact tools), and `call_agent`, which turns one call into
  an `AgentAnswer` (tokens, cost, latency, and on failure its `FailureKind`), retried under a `RetryPolicy`,
  with a circuit breaker per endpoint (`Health`).
- Choosing, `selection/`: the profile embedder and FAISS index, the scores and the selectors
  (`UCBSelector`, `RandomSelector`, all implementing `Selector`).
- Remembering, `dadb/`: the DADB of every agent's statistics (`AgentDatabase`, `open_dadb`) on SQLite or
  PostgreSQL.

Public names are imported on first use, so `import reso.agents` loads no model library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from reso.agents.selection.embeddings import Embedder, load_embedder
    from reso.agents.selection.index import ProfileIndex
    from reso.agents.selection.selector import (
        Candidate,
        RandomSelector,
        Selector,
        SelectorConfig,
        UCBSelector,
    )

_EXPORTS: dict[str, str] = {
    "AgentAnswer": "reso.agents.adapters.answers",
    "AgentDatabase": "reso.agents.dadb.base",
    "open_dadb": "reso.agents.dadb.open",
    "Embedder": "reso.agents.selection.embeddings",
    "load_embedder": "reso.agents.selection.embeddings",
    "FailureKind": "reso.agents.adapters.failures",
    "Health": "reso.agents.adapters.health",
    "ProfileIndex": "reso.agents.selection.index",
    "call_agent": "reso.agents.adapters.invoke",
    "load_chat_model": "reso.agents.adapters.loader",
    "Pool": "reso.agents.pool",
    "PoolError": "reso.agents.pool",
    "load_pool": "reso.agents.pool",
    "Agent": "reso.agents.profiles",
    "ModelSpec": "reso.agents.profiles",
    "RetryPolicy": "reso.agents.adapters.retry",
    "Candidate": "reso.agents.selection.selector",
    "RandomSelector": "reso.agents.selection.selector",
    "Selector": "reso.agents.selection.selector",
    "SelectorConfig": "reso.agents.selection.selector",
    "UCBSelector": "reso.agents.selection.selector",
}

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
    "RetryPolicy",
    "Selector",
    "SelectorConfig",
    "UCBSelector",
    "call_agent",
    "load_chat_model",
    "load_embedder",
    "load_pool",
    "open_dadb",
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
