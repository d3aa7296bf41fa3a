"""Scripted fake chat models for offline tests of every layer.

`ScriptedChatModel` is a real LangChain chat model (so callbacks, caches, `ainvoke`, `abatch` and
`with_retry` behave as in production) whose replies come from a script instead of an API:

```python
from tests.fakes import ScriptedChatModel, reply

model = ScriptedChatModel(script=["first answer", reply("second", input_tokens=12, output_tokens=3),
                                  TimeoutError("slow provider")])
model.invoke("hi").text                  # "first answer", usage counted from whitespace words
model.invoke("hi").usage_metadata        # {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
model.invoke("hi")                       # raises TimeoutError("slow provider")
```

Script items may be a string, an `AIMessage`, an exception (raised), a callable taking the message
list and returning any of these, or `Slow(item, delay_s)` to delay that one reply. For concurrent tests, where call order is not fixed, use `by_prompt`:
replies keyed by a substring of the last human message (the longest matching key wins), with `script`
or `default` as the fallback. `delay_s` (one number, or one per call) makes calls slow; `calls` records
the message lists the model received, `call_count` how many calls reached it (cache hits do not).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

ScriptItem = str | AIMessage | BaseException | Callable[[list[BaseMessage]], Any]


@dataclass(frozen=True)
class Slow:
    """A script item answered only after `delay_s` seconds (on top of the model's `delay_s`)."""

    item: Any
    delay_s: float


class ScriptExhausted(RuntimeError):
    """A scripted model was called more often than its script allows (and has no default)."""


def usage(input_tokens: int, output_tokens: int) -> UsageMetadata:
    """A `usage_metadata` dict with the given token counts."""
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens}


def reply(text: str, input_tokens: int = 10, output_tokens: int | None = None, **metadata: Any) -> AIMessage:
    """A scripted answer carrying usage metadata (output tokens default to the number of words)."""
    out = len(text.split()) if output_tokens is None else output_tokens
    return AIMessage(content=text, usage_metadata=usage(input_tokens, out), response_metadata=metadata)


def _words(messages: Sequence[BaseMessage]) -> int:
    return sum(len(message.text.split()) for message in messages)


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script, by prompt substring, or with a default (see module doc)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Any] = Field(default_factory=list)
    """Replies in call order (str, AIMessage, exception, or callable(messages) -> one of these)."""
    by_prompt: dict[str, Any] = Field(default_factory=dict)
    """Replies keyed by a substring of the last human message; checked before `script`."""
    default: Any = None
    """Reply when `by_prompt` has no match and `script` is exhausted (or `cycle` is off and empty)."""
    cycle: bool = False
    """Restart the script from the top when it runs out."""
    delay_s: float | list[float] = 0.0
    """Seconds each call waits before answering: one value, or one per call (the last repeats)."""
    model_name: str = "scripted"
    """Name reported in response metadata and included in the cache key."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _position: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The message lists of every call that reached the model, in order."""
        return list(self._calls)

    @property
    def call_count(self) -> int:
        return len(self._calls)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Accept tool bindings and ignore them (the script decides what comes back)."""
        return self

    def _next(self, messages: list[BaseMessage]) -> tuple[Any, float]:
        with self._lock:
            index = len(self._calls)
            self._calls.append(list(messages))
            delays = self.delay_s if isinstance(self.delay_s, list) else [self.delay_s]
            delay = delays[min(index, len(delays) - 1)] if delays else 0.0
            human = [m for m in messages if isinstance(m, HumanMessage)]
            last = human[-1].text if human else ""
            keys = [key for key in self.by_prompt if key in last]
            if keys:
                return self.by_prompt[max(keys, key=len)], delay
            if self._position < len(self.script) or (self.cycle and self.script):
                item = self.script[self._position % len(self.script)]
                self._position += 1
                return item, delay
            if self.default is not None:
                return self.default, delay
        raise ScriptExhausted(f"{self.model_name}: script exhausted after {len(self.script)} replies")

    def _result(self, item: Any, messages: list[BaseMessage]) -> ChatResult:
        if callable(item) and not isinstance(item, (str, AIMessage, BaseException)):
            item = item(messages)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            item = AIMessage(content=item)
        if not isinstance(item, AIMessage):
            raise TypeError(f"script items must be str, AIMessage or exceptions, got {type(item).__name__}")
        if item.usage_metadata is None:
            item = item.model_copy(update={"usage_metadata": usage(_words(messages), len(item.text.split()))})
        metadata = {"model_name": self.model_name, **item.response_metadata}
        item = item.model_copy(update={"response_metadata": metadata})
        return ChatResult(generations=[ChatGeneration(message=item)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        item, delay = self._next(messages)
        if isinstance(item, Slow):
            item, delay = item.item, delay + item.delay_s
        if delay:
            time.sleep(delay)
        return self._result(item, messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        item, delay = self._next(messages)
        if isinstance(item, Slow):
            item, delay = item.item, delay + item.delay_s
        if delay:
            await asyncio.sleep(delay)
        return self._result(item, messages)


def scripted_models(replies: Mapping[str, Sequence[ScriptItem]], **kwargs: Any) -> dict[str, ScriptedChatModel]:
    """One scripted model per key (for example per agent id), each with its own script."""
    return {key: ScriptedChatModel(script=list(items), model_name=key, **kwargs) for key, items in replies.items()}
