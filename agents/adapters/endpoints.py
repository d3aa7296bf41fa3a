"""Per-endpoint concurrency: at most N agent calls in flight to one server, whichever agents make them.

A local OpenAI-compatible server often serves one request at a time (llama.cpp and llama-cpp-python
default to one slot, Ollama to one or four); requests beyond that queue inside the server, where the
client's time limit runs while nothing is generated for them. So every model with the same endpoint
shares one `EndpointSlots`, and a call waits on our side for a free slot before it is sent
(`reso.agents.adapters.retry.call_with_retries` holds the slot for one attempt; waiting for it is not counted
against the attempt's time limit).

The endpoint is the model's `base_url` (normalised: lower-case scheme and host, no trailing slash); without
one, its provider's API (`openai`, `anthropic`, …), or for an in-process model (`local:`, `replay:`,
`tool:`) the model itself. Its limit is the pool's `params.max_concurrency`:

- unset: 1 for a `base_url` on this machine or a private network (localhost, 127.0.0.0/8, ::1, 10/8,
  172.16/12, 192.168/16, link-local), the one value safe for every local server; no limit otherwise
  (hosted APIs take many requests at once and say 429 when they do not);
- a positive integer: that many calls at once (vLLM and SGLang batch many: 8–64 suits them);
- `null`: no limit, not even the local default.

Models on one endpoint share the limit when they ask for the same value (the default always does); two
different values for one endpoint give two separate limits. A limiter lives as long as a call holds or
waits for it: an endpoint with nothing in flight has nothing to remember.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import weakref
from collections import deque
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from reso.agents.profiles import Provider

if TYPE_CHECKING:
    from reso.agents.profiles import ModelSpec

MAX_CONCURRENCY_PARAM = "max_concurrency"
"""Key of `ModelSpec.params` that sets the endpoint's concurrency limit instead of a constructor argument."""

LOCAL_DEFAULT_CONCURRENCY = 1
"""Limit of a `base_url` on this machine or a private network when the pool names none."""


class EndpointSlots:
    """At most `limit` holders at once, first come first served, across threads and event loops.

    Hand-written rather than an `asyncio.Semaphore`: that one binds to the event loop it first waits on,
    and one process runs agent calls on several loops (each command's `asyncio.run`, the Python API's
    background loop, a thread's own loop); a waiter here is woken on its own loop, whichever releases.
    """

    def __init__(self, limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive integer, got {limit!r}")
        self.limit = limit
        self._lock = threading.Lock()
        self._free = limit
        self._waiting: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    @property
    def in_use(self) -> int:
        """Slots held now (or handed to a waiter that has not resumed yet)."""
        with self._lock:
            return self.limit - self._free

    @property
    def waiting(self) -> int:
        """Callers queued for a slot."""
        with self._lock:
            return len(self._waiting)

    async def acquire(self) -> None:
        """Wait for a free slot and take it."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiting:  # no overtaking a queued waiter
                self._free -= 1
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiting.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                queued = (loop, waiter) in self._waiting
                if queued:
                    self._waiting.remove((loop, waiter))
            # Cancelled just after the slot was handed over: it is ours, so pass it on. (Cancelled before
            # the hand-over reached us: `_hand_over` sees the cancelled future and passes it on itself.)
            if not queued and waiter.done() and not waiter.cancelled():
                self.release()
            raise

    def release(self) -> None:
        """Give a slot back: to the longest waiter if any, else to the pool."""
        with self._lock:
            while self._waiting:
                loop, waiter = self._waiting.popleft()
                try:
                    loop.call_soon_threadsafe(self._hand_over, waiter)
                    return
                except RuntimeError:  # that waiter's loop is closed: it waits no more
                    continue
            self._free += 1

    def _hand_over(self, waiter: asyncio.Future[None]) -> None:
        if waiter.done():  # cancelled while the slot was on its way
            self.release()
        else:
            waiter.set_result(None)

    async def __aenter__(self) -> EndpointSlots:
        await self.acquire()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


@lru_cache(maxsize=256)
def endpoint_of(base_url: str) -> str:
    """`base_url` normalised so that spellings of one server compare equal (`HTTP://Host:8000/v1/`)."""
    parts = urlsplit(base_url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


@lru_cache(maxsize=256)
def is_local_url(base_url: str) -> bool:
    """Whether `base_url` names this machine or a private network (by `localhost` or an IP address)."""
    host = urlsplit(base_url.strip()).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


IN_PROCESS_PROVIDERS = frozenset({Provider.LOCAL, Provider.REPLAY, Provider.TOOL})


def endpoint_key(model: ModelSpec) -> str:
    """What `model` shares a concurrency limit with: its normalised `base_url`, its provider's API, or itself."""
    if model.base_url:
        return endpoint_of(model.base_url)
    return model.spec if model.provider in IN_PROCESS_PROVIDERS else model.provider


def check_max_concurrency(value: Any) -> int | None:
    """`params.max_concurrency` as given, checked: a positive integer or None.

    Raises:
        ValueError: Anything else (the message names the key and the value).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"params.{MAX_CONCURRENCY_PARAM} must be a positive integer or null, got {value!r}")
    return value


def concurrency_limit(model: ModelSpec) -> int | None:
    """The endpoint limit `model` asks for: its `params.max_concurrency`, else the local default or None."""
    if MAX_CONCURRENCY_PARAM in model.params:
        return check_max_concurrency(model.params[MAX_CONCURRENCY_PARAM])
    if model.base_url and is_local_url(model.base_url):
        return LOCAL_DEFAULT_CONCURRENCY
    return None


_registry: weakref.WeakValueDictionary[tuple[str, int], EndpointSlots] = weakref.WeakValueDictionary()
_registry_lock = threading.Lock()


def endpoint_slots(model: ModelSpec) -> EndpointSlots | None:
    """The slots shared by every model on `model`'s endpoint with its limit, or None when it has none."""
    limit = concurrency_limit(model)
    if limit is None:
        return None
    key = (endpoint_key(model), limit)
    with _registry_lock:
        slots = _registry.get(key)
        if slots is None:
            slots = _registry[key] = EndpointSlots(limit)
        return slots
