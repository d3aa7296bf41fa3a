"""How a model is reached and called: one chat model per agent spec, and one call turned into an answer.

- Loading: `load_chat_model` (`loader.py`, failing with `load_error.py`'s `ModelLoadError`) maps a `ModelSpec`
  to a LangChain chat model: hosted providers and OpenAI-compatible endpoints, transformers models on this
  machine (`local.py`), recorded answers replayed offline (`replay.py`, reading `replay_table.py`'s files and
  asking `replay_question.py`'s question, with `release_text.py`'s spellings; `replay_pool.py` builds a pool
  over replay files), exact tools (`tools.py`) on `inline.py`'s event-loop base, and `faults.py`'s
  fault-injecting wrapper.
- Calling: an agent reads its subtask in `prompting.py`'s layout; `call_agent` (`invoke.py`) turns one call
  into an `AgentAnswer` (`answers.py`) with tokens (`tokens.py`), cost (`prices.py`) and latency, and on
  failure its `FailureKind` (`failures.py`), retried under a `RetryPolicy` (`retry.py`), with a slot per
  endpoint (`endpoints.py`), a circuit breaker per endpoint (`health.py`) and LangChain's response cache
  (`cache.py`).

Public names are imported on first use, so importing the package loads no model library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.agents.adapters.answers import AgentAnswer
    from reso.agents.adapters.cache import ResponseCacheError, disable_response_cache, enable_response_cache
    from reso.agents.adapters.endpoints import EndpointSlots, endpoint_slots
    from reso.agents.adapters.failures import DeclinedCall, FailureKind, failure_kind
    from reso.agents.adapters.faults import FaultConfig, FaultyChatModel, with_faults
    from reso.agents.adapters.health import Health
    from reso.agents.adapters.inline import InlineChatModel
    from reso.agents.adapters.invoke import ModelCache, call_agent, models_for_pool
    from reso.agents.adapters.load_error import ModelLoadError
    from reso.agents.adapters.loader import load_chat_model
    from reso.agents.adapters.local import LocalChatModel, load_local_model
    from reso.agents.adapters.prices import PriceList, PriceListError, list_price, load_price_list
    from reso.agents.adapters.prompting import ContextAnswer, current_subtask, render_subtask_prompt
    from reso.agents.adapters.replay import (
        NoRecordingError,
        ReplayChatModel,
        load_replay_model,
    )
    from reso.agents.adapters.replay_pool import replay_pool_config
    from reso.agents.adapters.replay_table import ReplayError, ReplayTable
    from reso.agents.adapters.retry import RetryPolicy, call_with_retries
    from reso.agents.adapters.tokens import count_tokens
    from reso.agents.adapters.tools import CalculatorChatModel, ToolDeclined

__all__ = [
    "AgentAnswer",
    "CalculatorChatModel",
    "ContextAnswer",
    "DeclinedCall",
    "EndpointSlots",
    "FailureKind",
    "FaultConfig",
    "FaultyChatModel",
    "Health",
    "InlineChatModel",
    "LocalChatModel",
    "ModelCache",
    "ModelLoadError",
    "NoRecordingError",
    "PriceList",
    "PriceListError",
    "ReplayChatModel",
    "ReplayError",
    "ReplayTable",
    "ResponseCacheError",
    "RetryPolicy",
    "ToolDeclined",
    "call_agent",
    "call_with_retries",
    "count_tokens",
    "current_subtask",
    "disable_response_cache",
    "enable_response_cache",
    "endpoint_slots",
    "failure_kind",
    "list_price",
    "load_chat_model",
    "load_local_model",
    "load_price_list",
    "load_replay_model",
    "models_for_pool",
    "render_subtask_prompt",
    "replay_pool_config",
    "with_faults",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "answers": ["AgentAnswer"],
    "cache": ["ResponseCacheError", "disable_response_cache", "enable_response_cache"],
    "endpoints": ["EndpointSlots", "endpoint_slots"],
    "failures": ["DeclinedCall", "FailureKind", "failure_kind"],
    "faults": ["FaultConfig", "FaultyChatModel", "with_faults"],
    "health": ["Health"],
    "inline": ["InlineChatModel"],
    "invoke": ["ModelCache", "call_agent", "models_for_pool"],
    "load_error": ["ModelLoadError"],
    "loader": ["load_chat_model"],
    "local": ["LocalChatModel", "load_local_model"],
    "prices": ["PriceList", "PriceListError", "list_price", "load_price_list"],
    "prompting": ["ContextAnswer", "current_subtask", "render_subtask_prompt"],
    "replay": ["NoRecordingError", "ReplayChatModel", "load_replay_model"],
    "replay_pool": ["replay_pool_config"],
    "replay_table": ["ReplayError", "ReplayTable"],
    "retry": ["RetryPolicy", "call_with_retries"],
    "tokens": ["count_tokens"],
    "tools": ["CalculatorChatModel", "ToolDeclined"],
})
