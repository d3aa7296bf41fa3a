"""Which keys a model's `params:` may hold, read from the client libraries themselves, so that a pool file's
typo (`max_tokns`) is refused when the pool loads, naming the key, rather than at the first call.

A key is accepted when this project's loader reads it (the rate limiter, `max_concurrency`,
`max_tokens_param`: `reso.agents.adapters.loader`), or when the model's client takes it:

| provider | keys taken |
| --- | --- |
| `openai:` (OpenAI, or any OpenAI-compatible `base_url`) | the fields of langchain-openai's `ChatOpenAI` (and their aliases), and the keyword arguments of the openai client's `chat.completions.create` (which `ChatOpenAI` passes on); a server's own fields go under `extra_body` |
| `local:` | the fields of `LocalChatModel` |
| `tool:` | the fields of the tool's chat model |
| `replay:` | `prefix_path` |

Another provider (`anthropic:`, …, through LangChain's `init_chat_model`) is checked by its own client when
the model is built.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterable
from typing import Any

from reso.agents.adapters.endpoints import MAX_CONCURRENCY_PARAM
from reso.agents.profiles import ModelSpec, Provider

RATE_LIMIT_PARAMS = ("requests_per_second", "max_bucket_size", "check_every_n_seconds")
"""Keys of `ModelSpec.params` that configure the model's rate limiter instead of its constructor (read by
`reso.agents.adapters.loader`)."""

TOKEN_PARAM = "max_tokens_param"
"""Key of `ModelSpec.params` naming the request field that carries the output-token cap
(`reso.agents.adapters.loader.TokenParam`)."""

REPLAY_PARAMS = frozenset({"prefix_path"})
"""The keys `load_replay_model` takes."""

EXTRA_BODY = "extra_body"
MODEL_KWARGS = "model_kwargs"


LOADER_PARAMS = frozenset({*RATE_LIMIT_PARAMS, MAX_CONCURRENCY_PARAM, TOKEN_PARAM})
"""The keys `reso.agents.adapters.loader` reads itself, whatever the client."""


def field_names(model_class: Any) -> frozenset[str]:
    """The keyword arguments a pydantic model class takes: its fields, under their names and aliases."""
    names: set[str] = set()
    for name, info in model_class.model_fields.items():
        names.add(name)
        if info.alias:
            names.add(info.alias)
    return frozenset(names)


def openai_request_params() -> frozenset[str]:
    """The keyword arguments of the openai client's `chat.completions.create` (what `ChatOpenAI` sends
    a key it does not know as)."""
    from openai.resources.chat.completions import AsyncCompletions

    parameters = inspect.signature(AsyncCompletions.create).parameters
    return frozenset(name for name, parameter in parameters.items()
                     if name not in ("self", "messages") and parameter.kind is inspect.Parameter.KEYWORD_ONLY)


def _tool_params(target: str) -> frozenset[str] | None:
    from reso.agents.adapters.tools import TOOLS

    tool = TOOLS.get(target)
    return field_names(tool) if tool is not None else None  # an unknown tool is the loader's error


def client_params(model: ModelSpec) -> tuple[frozenset[str], str] | None:
    """The `params` keys `model`'s client takes and the client's name; None when not known here."""
    provider = model.provider
    if provider == Provider.OPENAI:
        from langchain_openai import ChatOpenAI

        return (field_names(ChatOpenAI) | openai_request_params(),
                "the openai client (ChatOpenAI, chat.completions.create)")
    if provider == Provider.LOCAL:
        from reso.agents.adapters.local import LocalChatModel

        return field_names(LocalChatModel) - {"model_path"}, "local models"
    if provider == Provider.TOOL:
        names = _tool_params(model.target)
        return (names, f"tool:{model.target}") if names is not None else None
    if provider == Provider.REPLAY:
        return REPLAY_PARAMS, "replay models"
    return None


def _hint(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    return f"; did you mean {close[0]}?" if close else ""


def unknown_param(model: ModelSpec) -> str | None:
    """Why `model.params` holds a key its client would not take (naming the key, `params.KEY: …`), or None
    when every key is known (or the provider's keys are not known here)."""
    if not model.params:
        return None
    found = client_params(model)
    if found is None:
        return None
    client, name = found
    known = client | LOADER_PARAMS
    for key in model.params:
        if str(key) not in known:
            extra = f" (a server's own fields go under params.{EXTRA_BODY})" if model.provider == Provider.OPENAI else ""
            return f"params.{key}: not a parameter of {name}{_hint(str(key), known)}{extra}"
    kwargs = model.params.get(MODEL_KWARGS)
    if model.provider == Provider.OPENAI and isinstance(kwargs, dict):
        request = openai_request_params()
        for key in kwargs:
            if str(key) not in request:
                return (f"params.{MODEL_KWARGS}.{key}: not a parameter of chat.completions.create"
                        f"{_hint(str(key), request)} (a server's own fields go under params.{EXTRA_BODY})")
    return None
