"""One loader from a `ModelSpec` to a LangChain chat model, whatever is behind it.

| spec | model |
| --- | --- |
| `provider:model` (`openai:gpt-4o-mini`, `anthropic:claude-...`, …) | `init_chat_model(spec, **params)` |
| `openai:<model>` with `base_url` (vLLM, Ollama, DeepSeek, Qwen, …) | `ChatOpenAI(base_url=..., api_key=$api_key_env)` |
| `local:<path>` | a transformers checkpoint (or `.gguf` file) on CPU/GPU (`reso.agents.adapters.local`) |
| `replay:<file>#<model>` | recorded answers (`reso.agents.adapters.replay`) |
| `tool:<name>` | a deterministic tool agent (`reso.agents.adapters.tools`) |

Everything returned is a `BaseChatModel`, so tracing, rate limiters, retries and response caches apply
unchanged. `params.requests_per_second` (with optional `max_bucket_size` and `check_every_n_seconds`)
becomes a LangChain `InMemoryRateLimiter` on the model, whatever the provider; all agents sharing the
model spec share it. `params.max_concurrency` limits the calls in flight to the model's endpoint (shared by
every model on one `base_url`; a local server gets 1 by default: `reso.agents.adapters.endpoints`). API keys are read
from the environment variable the spec names, handed to the client as a `SecretStr`, and never written into
an error message.

The output-token cap (`params.max_tokens`, or its newer name `max_completion_tokens`) is sent under the
name the endpoint honours, set by `params.max_tokens_param`. langchain-openai's `ChatOpenAI` always
renames `max_tokens` to `max_completion_tokens` (OpenAI's newer field), which OpenAI-compatible servers
such as llama-cpp-python ignore, so each call would generate to the context limit. Hence the default:
`max_tokens` for a `base_url` server (sent through `extra_body`, past the rename), `max_completion_tokens`
for OpenAI itself (no `base_url`, or `api.openai.com`).
"""

from __future__ import annotations

import os
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from langchain_core.language_models import BaseChatModel
from langchain_core.rate_limiters import InMemoryRateLimiter
from pydantic import SecretStr

from reso.agents.adapters.endpoints import MAX_CONCURRENCY_PARAM, check_max_concurrency
from reso.agents.adapters.faults import with_faults
from reso.agents.adapters.load_error import ModelLoadError
from reso.agents.adapters.params import RATE_LIMIT_PARAMS, TOKEN_PARAM, unknown_param
from reso.agents.profiles import ModelSpec, Provider

# Placeholder key for OpenAI-compatible servers that ignore keys (vLLM, Ollama). A user's real
# OPENAI_API_KEY must not be sent to a third-party base_url just because no key variable was named.
NO_KEY = "not-needed"


def api_key_from_env(model: ModelSpec) -> SecretStr | None:
    """The API key named by `model.api_key_env`, or None when the spec names no variable.

    Raises:
        ModelLoadError: The variable is named but unset or empty (the message names the variable only).
    """
    if not model.api_key_env:
        return None
    value = os.environ.get(model.api_key_env, "")
    if not value.strip():
        raise ModelLoadError(
            f"{model.spec}: environment variable {model.api_key_env} (api_key_env) is not set or empty"
        )
    return SecretStr(value)


TokenParam = Literal["max_tokens", "max_completion_tokens"]


def default_token_param(model: ModelSpec) -> TokenParam:
    """`max_completion_tokens` for OpenAI itself, `max_tokens` for any other `base_url` server."""
    host = urlsplit(model.base_url).hostname if model.base_url else "api.openai.com"
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def token_cap_to_request(model: ModelSpec, params: dict[str, Any]) -> None:
    """Move the token cap in `params` (in place) to where `ChatOpenAI` sends it as the endpoint's field.

    Raises:
        ModelLoadError: An unknown `max_tokens_param`, or the cap given twice.
    """
    field = params.pop(TOKEN_PARAM, None) or default_token_param(model)
    if field not in get_args(TokenParam):
        raise ModelLoadError(f"{model.spec}: params.{TOKEN_PARAM} must be one of {list(get_args(TokenParam))}, "
                             f"got {field!r}")
    given = {name: params.pop(name) for name in get_args(TokenParam) if name in params}
    extra_body = dict(params.get("extra_body") or {})
    names = [*given, *(["extra_body.max_tokens"] if "max_tokens" in extra_body else [])]
    if len(names) > 1:
        raise ModelLoadError(f"{model.spec}: params give the token cap more than once: {', '.join(names)}")
    if not given:
        return
    [cap] = given.values()
    if field == "max_completion_tokens":
        params["max_tokens"] = cap  # ChatOpenAI's field, sent as max_completion_tokens
    else:
        params["extra_body"] = {**extra_body, "max_tokens": cap}


def _openai_compatible(model: ModelSpec, params: dict[str, Any]) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    key = api_key_from_env(model) or SecretStr(NO_KEY)
    params = {"max_retries": 0, **params}  # reso.agents.adapters.retry retries instead (its docstring says why)
    token_cap_to_request(model, params)
    return ChatOpenAI(model=model.target, base_url=model.base_url, api_key=key, **params)


# Providers whose LangChain client retries HTTP errors itself (`max_retries`).
CLIENT_RETRY_PROVIDERS = frozenset({Provider.OPENAI, Provider.AZURE_OPENAI, Provider.ANTHROPIC})


def _init_chat_model(model: ModelSpec, params: dict[str, Any]) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    key = api_key_from_env(model)
    if key is not None:
        params = {**params, "api_key": key}
    if model.base_url:
        params = {**params, "base_url": model.base_url}
    if model.provider in CLIENT_RETRY_PROVIDERS:
        params = {"max_retries": 0, **params}  # reso.agents.adapters.retry retries instead (its docstring says why)
    if model.provider == Provider.OPENAI:
        token_cap_to_request(model, params)
    try:
        return init_chat_model(model.spec, **params)
    except ImportError as error:
        raise ModelLoadError(f"{model.spec}: the provider's LangChain package is not installed ({error})") from None


def rate_limiter_from_params(model: ModelSpec, params: dict[str, Any]) -> InMemoryRateLimiter | None:
    """Take the rate-limit keys out of `params` (in place) and build the limiter they describe.

    Returns:
        An `InMemoryRateLimiter`, or None when `params` has no `requests_per_second`.

    Raises:
        ModelLoadError: A limit key without `requests_per_second`, or a value that is not a positive number.
    """
    given = {key: params.pop(key) for key in RATE_LIMIT_PARAMS if key in params}
    if not given:
        return None
    if "requests_per_second" not in given:
        raise ModelLoadError(f"{model.spec}: params {sorted(given)} need params.requests_per_second")
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ModelLoadError(f"{model.spec}: params.{key} must be a positive number, got {value!r}")
    return InMemoryRateLimiter(**{key: float(value) for key, value in given.items()})


def load_chat_model(model: ModelSpec | str) -> BaseChatModel:
    """Turn a model spec into a LangChain chat model.

    Args:
        model: A `ModelSpec`, or a bare spec string such as `"tool:calculator"`.

    Returns:
        The chat model; `model.params` are passed to its constructor, except the rate-limit keys
        (`RATE_LIMIT_PARAMS`), which become its `rate_limiter`, `max_concurrency` (the endpoint's limit,
        applied per call) and `max_tokens_param` (the field the token cap is sent as). With
        `model.faults`, the model comes wrapped in a fault injector (`reso.agents.adapters.faults`).

    Raises:
        ModelLoadError: Unknown tool, missing API-key variable, unknown provider, a bad `local:` path, a
            bad rate limit, concurrency limit or token-cap field, a `params` key the client does not take
            (`reso.agents.adapters.params`).
        reso.agents.adapters.replay.ReplayError: A missing or invalid replay file, or a model it does not record.
    """
    if isinstance(model, str):
        model = ModelSpec(spec=model)
    problem = unknown_param(model)
    if problem is not None:  # a pool file's is refused as it loads (reso.agents.pool); a spec made in code here
        raise ModelLoadError(f"{model.spec}: {problem}")
    params = dict(model.params)
    limiter = rate_limiter_from_params(model, params)
    try:  # read per call by reso.agents.adapters.endpoints; checked here so that a bad value fails at load
        check_max_concurrency(params.pop(MAX_CONCURRENCY_PARAM, None))
    except ValueError as error:
        raise ModelLoadError(f"{model.spec}: {error}") from None
    if TOKEN_PARAM in params and model.provider != Provider.OPENAI:
        raise ModelLoadError(f"{model.spec}: params.{TOKEN_PARAM} applies to openai: models only")
    chat_model = _build(model, params)
    if limiter is not None:
        # Set on the built model rather than passed to each constructor: replay, tool and local loaders
        # validate their own params, and `rate_limiter` is a field of every BaseChatModel.
        chat_model.rate_limiter = limiter
    return with_faults(chat_model, model.faults, stream=model.short_name)


def _build(model: ModelSpec, params: dict[str, Any]) -> BaseChatModel:
    provider = model.provider
    if provider == Provider.TOOL:
        from reso.agents.adapters.tools import TOOLS

        if model.target not in TOOLS:
            raise ModelLoadError(f"{model.spec}: unknown tool {model.target!r}; known tools: {', '.join(TOOLS)}")
        return TOOLS[model.target](**params)
    if provider == Provider.REPLAY:
        from reso.agents.adapters.replay import load_replay_model

        return load_replay_model(model.target, params)
    if provider == Provider.LOCAL:
        from reso.agents.adapters.local import load_local_model

        return load_local_model(model.target, params)
    try:
        if provider == Provider.OPENAI and model.base_url:
            return _openai_compatible(model, params)
        return _init_chat_model(model, params)
    except ModelLoadError:
        raise
    except Exception as error:  # noqa: BLE001 - client constructors raise their own types (e.g. OpenAIError)
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ModelLoadError(f"{model.spec}: {type(error).__name__}: {first}") from None
