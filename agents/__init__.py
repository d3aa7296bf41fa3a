"""The agents layer: who can answer a subtask, how they are called, and how they are chosen.

- Who: agent profiles and pools (`Agent`, `ModelSpec`, `Pool`, `load_pool`) and their chat models
  (`load_chat_model`: hosted and OpenAI-compatible endpoints, offline replay of recorded answers, exact
  tools).
- Calling: `call_agent` turns one call into an `AgentAnswer` (tokens, cost, latency, and on failure its
  `FailureKind`), retried under a `RetryPolicy`, with a circuit breaker per endpoint (`Health`).
- Choosing: the profile embedder and FAISS index, the DADB of every agent's statistics (`AgentDatabase`,
  `open_dadb`) and the selectors (`UCBSelector`, `RandomSelector`, all implementing `Selector`).

Public names are imported on first use, so `import reso.agents` loads no model library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.agents.answers import AgentAnswer
    from reso.agents.dadb_base import AgentDatabase
    from reso.agents.dadb_open import open_dadb
    from reso.agents.embeddings import Embedder, load_embedder
    from reso.agents.failures import FailureKind
    from reso.agents.health import Health
    from reso.agents.index import ProfileIndex
    from reso.agents.invoke import call_agent
    from reso.agents.models import load_chat_model
    from reso.agents.pool import Pool, PoolError, load_pool
    from reso.agents.profiles import Agent, ModelSpec
    from reso.agents.retry import RetryPolicy
    from reso.agents.selector import Candidate, RandomSelector, Selector, SelectorConfig, UCBSelector

_EXPORTS: dict[str, str] = {
    "AgentAnswer": "reso.agents.answers",
    "AgentDatabase": "reso.agents.dadb_base",
    "open_dadb": "reso.agents.dadb_open",
    "Embedder": "reso.agents.embeddings",
    "load_embedder": "reso.agents.embeddings",
    "FailureKind": "reso.agents.failures",
    "Health": "reso.agents.health",
    "ProfileIndex": "reso.agents.index",
    "call_agent": "reso.agents.invoke",
    "load_chat_model": "reso.agents.models",
    "Pool": "reso.agents.pool",
    "PoolError": "reso.agents.pool",
    "load_pool": "reso.agents.pool",
    "Agent": "reso.agents.profiles",
    "ModelSpec": "reso.agents.profiles",
    "RetryPolicy": "reso.agents.retry",
    "Candidate": "reso.agents.selector",
    "RandomSelector": "reso.agents.selector",
    "Selector": "reso.agents.selector",
    "SelectorConfig": "reso.agents.selector",
    "UCBSelector": "reso.agents.selector",
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
