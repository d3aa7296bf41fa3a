"""Calling an agent: one chat-model call turned into an `AgentAnswer` with tokens, cost and latency.

Every failure (a timeout, an HTTP error, a replay agent without a recording, a tool that declines) comes
back as an `AgentAnswer` whose `error` is one short line and whose `failure` says its kind
(`reso.agents.adapters.failures`), so that one failing candidate never brings down a subtask. Error lines are
scrubbed of API keys before they leave this module. A failed call costs nothing.
Transient failures (timeouts, 429, 5xx, lost connections) are retried first under a `RetryPolicy`
(`reso.agents.adapters.retry`); the answer counts the retries.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from reso.agents.adapters.answers import AgentAnswer
from reso.agents.adapters.endpoints import endpoint_slots
from reso.agents.adapters.failures import failure_kind
from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.retry import NO_RETRY, RetryFailed, RetryPolicy, call_with_retries
from reso.agents.profiles import Agent, ModelSpec

MAX_ERROR_CHARS = 300

# Shapes of credentials that must never reach a log line even when we do not know the variable.
_SECRET_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=]+"),
    re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]+"),
)


def _known_secrets(agent: Agent) -> list[str]:
    names = {agent.model.api_key_env} if agent.model.api_key_env else set()
    names |= {name for name in os.environ if name.endswith(("_API_KEY", "_TOKEN", "_SECRET"))}
    return [value for name in names if len(value := os.environ.get(name, "")) >= 4]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secret values and key-shaped strings in `text` with `***`."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.re.groups else "") + "***", text)
    return text


def error_line(error: BaseException, agent: Agent | None = None) -> str:
    """`<ExceptionType>: <first line of the message>`, shortened and scrubbed of secrets."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if not message and isinstance(error, TimeoutError):
        message = "no answer in time"
    line = f"{type(error).__name__}: {message}" if message else type(error).__name__
    line = redact(line, _known_secrets(agent) if agent else ())
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


def token_usage(message: AIMessage) -> tuple[int, int]:
    """(input, output) tokens of a reply: `usage_metadata`, else the provider's `token_usage` metadata."""
    if message.usage_metadata:
        return int(message.usage_metadata.get("input_tokens", 0)), int(message.usage_metadata.get("output_tokens", 0))
    raw: Mapping[str, Any] = message.response_metadata.get("token_usage") or message.response_metadata.get("usage") or {}
    input_tokens = raw.get("prompt_tokens", raw.get("input_tokens", 0)) or 0
    output_tokens = raw.get("completion_tokens", raw.get("output_tokens", 0)) or 0
    return int(input_tokens), int(output_tokens)


async def call_agent(
    agent: Agent,
    model: BaseChatModel,
    prompt: str,
    *,
    timeout_s: float | None = None,
    config: Mapping[str, Any] | None = None,
    retry: RetryPolicy | None = None,
) -> AgentAnswer:
    """Ask one agent one subtask prompt and record the answer, its tokens, cost, latency and retries.

    Args:
        agent: The agent (its system prompt and prices are used).
        model: The agent's loaded chat model.
        prompt: The full subtask prompt (the human message).
        timeout_s: Give up on an attempt after this many seconds (a `TimeoutError`, transient: retried).
        config: Optional LangChain run config (callbacks, tags, metadata) passed to `ainvoke`.
        retry: How transient failures are retried; default: not at all.

    Returns:
        The answer; never raises for a failed call: `error` is set, `text` is empty and it is charged
        nothing instead. `latency_s` covers every attempt and the waits between them.
    """
    messages = [SystemMessage(agent.system_prompt), HumanMessage(prompt)]
    run_config = {"metadata": {"agent_id": agent.id}, **(config or {})}

    async def attempt() -> Any:
        # `asyncio.timeout`, not `wait_for`: the call runs in this task rather than in a new one per attempt.
        try:
            async with asyncio.timeout(timeout_s):
                return await model.ainvoke(messages, config=run_config)  # type: ignore[arg-type]
        except TimeoutError as error:
            if str(error) or timeout_s is None:
                raise
            raise TimeoutError(f"no answer within {timeout_s:g} s") from None

    start = time.perf_counter()
    try:
        response, retries = await call_with_retries(attempt, retry or NO_RETRY, endpoint_slots(agent.model))
    except asyncio.CancelledError:
        raise
    except RetryFailed as failed:
        answer = AgentAnswer(agent_id=agent.id, text="", latency_s=time.perf_counter() - start,
                             error=error_line(failed.error, agent),
                             retries=failed.retries, failure=failure_kind(failed.error))
        # The failed call's frames (LangChain's among them) keep its exception in their locals: cycles that
        # only the garbage collector would free, a few hundred objects per failed call. Nothing reads them
        # once the error is a line, so they are cleared here and freed at once.
        traceback.clear_frames(failed.__traceback__)
        traceback.clear_frames(failed.error.__traceback__)
        return answer
    latency = time.perf_counter() - start
    input_tokens, output_tokens = token_usage(response) if isinstance(response, AIMessage) else (0, 0)
    return AgentAnswer(
        agent_id=agent.id,
        text=response.text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=agent.cost_usd(input_tokens, output_tokens),
        latency_s=latency,
        retries=retries,
    )


ModelLoader = Callable[[ModelSpec], BaseChatModel]


class ModelCache:
    """Loads each distinct model spec once and hands the same chat model to every agent that uses it.

    `load` turns a spec into a chat model: `load_chat_model` unless the caller brings its own (a fake, a
    loader that counts or refuses).
    """

    def __init__(self, load: ModelLoader = load_chat_model) -> None:
        self.load = load
        self._models: dict[str, BaseChatModel] = {}

    def get(self, spec: ModelSpec) -> BaseChatModel:
        """The chat model for `spec`, loading it on first use."""
        key = spec.model_dump_json(exclude={"name", "price_in", "price_out"})
        if key not in self._models:
            self._models[key] = self.load(spec)
        return self._models[key]

    def __len__(self) -> int:
        return len(self._models)


def models_for_pool(pool: Iterable[Agent], cache: ModelCache | None = None) -> dict[str, BaseChatModel]:
    """agent id → chat model for every agent of a pool, loading each distinct model spec once."""
    cache = ModelCache() if cache is None else cache
    return {agent.id: cache.get(agent.model) for agent in pool}
