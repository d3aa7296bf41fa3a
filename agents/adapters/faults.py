"""Fault injection: a chat-model wrapper that makes a chosen share of calls fail the way real endpoints do.

On a seeded, per-call-index share of calls the wrapper times out, raises an HTTP 429 carrying `Retry-After`,
raises an HTTP 500, or answers with empty text, text with no answer, or garbage; every other call goes to
the wrapped model unchanged. The HTTP faults are the OpenAI client's own exception types
(`openai.RateLimitError`, `openai.InternalServerError`, `openai.APITimeoutError`) built around an
`httpx.Response`, so the retry layer that serves real endpoints is the one exercised.

From a pool file, on any model entry:

```yaml
models:
  - spec: "replay:gsm8k_replay_dev.jsonl#gpt-4-1106-preview"
    faults: {rate: 0.1, kinds: [timeout, rate_limit, server_error, empty, no_answer, garbage], seed: 0,
             retry_after_s: 0.05}
```

From code: `FaultyChatModel(inner=model, faults=FaultConfig(rate=0.3))`.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections import Counter
from typing import Any, Literal, get_args

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

FaultKind = Literal["timeout", "rate_limit", "server_error", "empty", "no_answer", "garbage"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
TRANSPORT_FAULTS = frozenset({"timeout", "rate_limit", "server_error"})

NO_ANSWER_TEXT = (
    "Let me think about this carefully. The problem gives several quantities and asks how they combine, "
    "but I cannot settle on a result with confidence, so I will leave the final step open."
)
# Letters and punctuation only: garbage must never contain a number an extractor could mistake for an answer.
_GARBAGE_ALPHABET = "abcdefghijklmnopqrstuvwxyz#@!?~%&*<>{}|^ "
_FAKE_URL = "http://fault-injection.invalid/v1/chat/completions"


class FaultConfig(BaseModel):
    """Which share of calls fail, and how."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: float = Field(ge=0.0, le=1.0, description="Share of calls that fail.")
    kinds: tuple[FaultKind, ...] = Field(default=FAULT_KINDS, min_length=1,
                                         description="Fault kinds, drawn uniformly for a failing call.")
    seed: int = Field(default=0, description="Seed of the per-call-index draw.")
    retry_after_s: float | None = Field(default=1.0, ge=0.0,
                                        description="Retry-After header of injected 429s (None: no header).")
    hang_s: float | None = Field(default=None, ge=0.0, description=(
        "A timeout fault sleeps this long and then raises TimeoutError (the caller's own time limit fires "
        "first when shorter); None: raise openai.APITimeoutError at once, as a client read timeout does."))

    @field_validator("kinds")
    @classmethod
    def _distinct(cls, kinds: tuple[FaultKind, ...]) -> tuple[FaultKind, ...]:
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"fault kinds repeat: {list(kinds)}")
        return kinds


def _uniforms(seed: int, index: int, stream: str) -> tuple[float, float]:
    # A hash rather than one shared RNG stream: call i's fate must not depend on how many calls other
    # coroutines made first, so a run's faults are reproducible whatever the interleaving.
    digest = hashlib.blake2b(f"{seed}:{stream}:{index}".encode(), digest_size=16).digest()
    scale = float(1 << 64)
    return int.from_bytes(digest[:8], "big") / scale, int.from_bytes(digest[8:], "big") / scale


def fault_for(config: FaultConfig, index: int, stream: str = "") -> FaultKind | None:
    """The fault of call number `index` (0-based) under `config`, or None when the call goes through.

    `stream` names the wrapped model, so that two models with the same settings do not fail in step."""
    draw, pick = _uniforms(config.seed, index, stream)
    if draw >= config.rate:
        return None
    return config.kinds[min(int(pick * len(config.kinds)), len(config.kinds) - 1)]


def _request() -> Any:
    # Any: openai 2 types its errors' requests as `httpx.Request`, openai 3 as `httpx2.Request`; both
    # only read the request's attributes, which httpx's has.
    import httpx

    return httpx.Request("POST", _FAKE_URL)


def _response(status: int, headers: dict[str, str] | None = None) -> Any:
    import httpx

    return httpx.Response(status, headers=headers or {}, request=_request())


def rate_limit_error(retry_after_s: float | None) -> Exception:
    """An `openai.RateLimitError` (HTTP 429), with a `Retry-After` header when `retry_after_s` is given."""
    import openai

    headers = {"retry-after": f"{retry_after_s:g}"} if retry_after_s is not None else {}
    return openai.RateLimitError("injected fault: rate limited (429)", response=_response(429, headers), body=None)


def server_error() -> Exception:
    """An `openai.InternalServerError` (HTTP 500)."""
    import openai

    return openai.InternalServerError("injected fault: internal server error (500)", response=_response(500),
                                      body=None)


def timeout_error() -> Exception:
    """An `openai.APITimeoutError`, what the OpenAI client raises when a read times out."""
    import openai

    return openai.APITimeoutError(request=_request())


def _garbage(seed: int, index: int) -> str:
    digest = hashlib.blake2b(f"garbage:{seed}:{index}".encode(), digest_size=48).digest()
    return "".join(_GARBAGE_ALPHABET[b % len(_GARBAGE_ALPHABET)] for b in digest)


def _content(kind: FaultKind, config: FaultConfig, index: int) -> ChatResult:
    text = {"empty": "", "no_answer": NO_ANSWER_TEXT}.get(kind, None)
    text = _garbage(config.seed, index) if text is None else text
    message = AIMessage(text, response_metadata={"injected_fault": kind})
    return ChatResult(generations=[ChatGeneration(message=message)])


class FaultyChatModel(BaseChatModel):
    """Wraps any chat model and injects `faults` into a seeded share of its calls.

    Call numbers count every call made through this wrapper (sync or async) from 0; `fault_stream` (the
    model's name when loaded from a pool) salts the draw; `injected` counts the faults injected so far by
    kind.
    """

    inner: BaseChatModel
    faults: FaultConfig
    fault_stream: str = ""
    # Never served from (or written to) a response cache: every call must meet the injector.
    cache: bool | None = False
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: int = PrivateAttr(default=0)
    _injected: Counter[str] = PrivateAttr(default_factory=Counter)

    @property
    def _llm_type(self) -> str:
        return f"faulty-{self.inner._llm_type}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"inner": self.inner._identifying_params, "faults": self.faults.model_dump()}

    @property
    def calls(self) -> int:
        return self._calls

    @property
    def injected(self) -> Counter[str]:
        return Counter(self._injected)

    def _next_fault(self) -> tuple[int, FaultKind | None]:
        with self._lock:
            index = self._calls
            self._calls += 1
            kind = fault_for(self.faults, index, self.fault_stream)
            if kind is not None:
                self._injected[kind] += 1
        return index, kind

    def _raise_transport(self, kind: FaultKind) -> None:
        if kind == "rate_limit":
            raise rate_limit_error(self.faults.retry_after_s)
        if kind == "server_error":
            raise server_error()
        if kind == "timeout" and self.faults.hang_s is None:
            raise timeout_error()

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        index, kind = self._next_fault()
        if kind in TRANSPORT_FAULTS:
            self._raise_transport(kind)
            time.sleep(self.faults.hang_s or 0.0)
            raise TimeoutError(f"injected fault: no answer within {self.faults.hang_s:g} s")
        if kind is not None:
            return _content(kind, self.faults, index)
        return _wrap(self.inner.invoke(messages, stop=stop, **kwargs))

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        index, kind = self._next_fault()
        if kind in TRANSPORT_FAULTS:
            self._raise_transport(kind)
            await asyncio.sleep(self.faults.hang_s or 0.0)
            raise TimeoutError(f"injected fault: no answer within {self.faults.hang_s:g} s")
        if kind is not None:
            return _content(kind, self.faults, index)
        return _wrap(await self.inner.ainvoke(messages, stop=stop, **kwargs))


def _wrap(message: BaseMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


def with_faults(model: BaseChatModel, faults: FaultConfig | None, stream: str = "") -> BaseChatModel:
    """`model` wrapped in a `FaultyChatModel` when `faults` asks for any (rate > 0), else `model` itself."""
    if faults is None or faults.rate <= 0.0:
        return model
    return FaultyChatModel(inner=model, faults=faults, fault_stream=stream)

