"""Retrying transient agent-call failures with tenacity: exponential backoff with jitter, `Retry-After` honoured.

Transient: timeouts, connection errors, HTTP 408 / 409 / 429 and 5xx (from the OpenAI and Anthropic clients,
httpx, or anything carrying a `status_code`). Everything else (a bad request, a wrong key, a tool that
declines, a replay agent without a recording) fails at once: asking again would get the same answer.

How this layer combines with the provider clients' own retries: the OpenAI and Anthropic clients retry 429,
5xx and connection errors themselves (`max_retries`, 2 by default). `reso.agents.adapters.loader` sets their
`max_retries` to 0 unless the pool's `params` name it, so that this layer alone retries: every provider
(LangChain, local, replay, tool, the fault injector) then gets the same policy, each attempt gets the call's
own time limit, and retries are counted on the `AgentAnswer` and in the run's records. A pool that sets
`params.max_retries` keeps the client's retries too, and attempts multiply (client × this layer).

Against an endpoint with a concurrency limit (`reso.agents.adapters.endpoints`: a local server by default), retries
must not pile work onto a server that is still busy:

- each attempt first waits for one of the endpoint's slots and holds it until the attempt ends; the
  backoff between attempts is slept without a slot, so other calls go first, and the retry then queues
  for a slot like any call;
- an attempt that runs out of time is cancelled, which closes its HTTP connection (vLLM and llama.cpp's
  server then stop generating; llama-cpp-python's finishes the request in hand but drops queued ones);
- a timeout is not retried there: the server may still be generating the abandoned answer, so a new
  attempt would wait behind it and most likely time out too. The answer fails, and the circuit breaker
  (`reso.agents.adapters.health`) stops asking a server that keeps timing out. Errors the server answered with
  (429, 5xx) and refused connections are still retried with backoff.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base
from tenacity.wait import wait_base

if TYPE_CHECKING:
    from reso.agents.adapters.endpoints import EndpointSlots

T = TypeVar("T")
TRANSIENT_STATUS = frozenset({408, 409, 429})
_TRANSIENT_NAMES = frozenset({"APITimeoutError", "APIConnectionError", "TimeoutException", "ConnectError",
                              "ReadTimeout", "ConnectTimeout", "RemoteProtocolError"})
# Read timeouts: the request reached the server, which may still be working on it.
_TIMEOUT_NAMES = frozenset({"APITimeoutError", "TimeoutException", "ReadTimeout"})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently transient failures are retried.

    Attributes:
        attempts: Calls in all, the first included (1: never retry).
        initial_s: First backoff without a `Retry-After`; it doubles on each retry.
        max_backoff_s: Longest backoff without a `Retry-After`.
        jitter_s: Random extra wait in [0, jitter_s] added to each exponential backoff.
        max_retry_after_s: Longest `Retry-After` honoured; a server asking for more is not retried (the
            answer is recorded as failed and the circuit breaker takes over).
        sleep: The coroutine that waits (tests pass a recorder; default `asyncio.sleep`).
    """

    attempts: int = 3
    initial_s: float = 0.5
    max_backoff_s: float = 20.0
    jitter_s: float = 0.5
    max_retry_after_s: float = 60.0
    sleep: Callable[[float], Awaitable[Any]] | None = None

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {self.attempts}")
        for name in ("initial_s", "max_backoff_s", "jitter_s", "max_retry_after_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


NO_RETRY = RetryPolicy(attempts=1)


def status_code(error: BaseException) -> int | None:
    """The HTTP status an exception carries (`status_code`, or its `response.status_code`), if any."""
    for holder in (error, getattr(error, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(error: BaseException) -> bool:
    """Whether asking again may succeed: a timeout, a lost connection, 408/409/429 or a 5xx."""
    if isinstance(error, TimeoutError | asyncio.TimeoutError | ConnectionError):
        return True
    code = status_code(error)
    if code is not None:
        return code in TRANSIENT_STATUS or code >= 500
    return type(error).__name__ in _TRANSIENT_NAMES


def is_timeout(error: BaseException) -> bool:
    """Whether the call ran out of time after it was sent (our time limit, or the client's read timeout)."""
    return isinstance(error, TimeoutError | asyncio.TimeoutError) or type(error).__name__ in _TIMEOUT_NAMES


def retry_after_s(error: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `Retry-After` in seconds or as an HTTP
    date), or None when it did not say."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _failure(state: RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome is not None else None


class _WaitRetryAfter(wait_base):
    """The server's `Retry-After` when it gave one, else exponential backoff with jitter."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self.backoff = wait_exponential_jitter(multiplier=policy.initial_s, max=policy.max_backoff_s,
                                               jitter=policy.jitter_s)

    def __call__(self, retry_state: RetryCallState) -> float:
        error = _failure(retry_state)
        asked = retry_after_s(error) if error is not None else None
        if asked is not None:
            return min(asked, self.policy.max_retry_after_s)
        return self.backoff(retry_state)


class _StopOnLongRetryAfter(stop_base):
    """Give up at once when the server asks for a longer wait than the policy allows."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s

    def __call__(self, retry_state: RetryCallState) -> bool:
        error = _failure(retry_state)
        asked = retry_after_s(error) if error is not None else None
        return asked is not None and asked > self.limit_s


async def call_with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy,
                            slots: EndpointSlots | None = None) -> tuple[T, int]:
    """Await `attempt()` until it succeeds, fails for good, or the policy runs out.

    Args:
        attempt: Makes one fresh call each time it is invoked.
        policy: Attempts, backoff and the `Retry-After` cap.
        slots: The endpoint's concurrency limit: each attempt holds one slot, and timeouts are final.

    Returns:
        The result and the number of retries it took (0 when the first call succeeded).

    Raises:
        RetryFailed: The last error, with the retries made, when every attempt failed or the error was
            not transient (`.error` is the original exception, also chained as `__cause__`).
    """
    call = attempt if slots is None else _holding(slots, attempt)
    retryable = is_transient if slots is None else _transient_but_no_timeout
    # The first attempt is made outside tenacity: nearly every call succeeds at once, and tenacity's
    # per-call state machine costs more CPU than a fast model's whole answer. A failure becomes the outcome
    # of tenacity's own first attempt (`_replaying`), so every wait, stop and count after it is tenacity's.
    try:
        return await call(), 0
    except asyncio.CancelledError:
        raise
    except Exception as error:
        first = error
    if policy.attempts == 1 or not retryable(first):
        raise RetryFailed(first, 0) from first
    retries = 0

    def count(_: RetryCallState) -> None:
        nonlocal retries
        retries += 1

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.attempts) | _StopOnLongRetryAfter(policy.max_retry_after_s),
        wait=_WaitRetryAfter(policy),
        retry=retry_if_exception(retryable),
        before_sleep=count,
        reraise=True,
        sleep=policy.sleep if policy.sleep is not None else asyncio.sleep,
    )
    try:
        result: T = await retrying(_replaying(first, call))
    except asyncio.CancelledError:
        raise
    except Exception as error:
        raise RetryFailed(error, retries) from error
    return result, retries


def _replaying(first: Exception, attempt: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
    """`attempt`, except that its first call fails with `first` (the attempt already made) without calling."""
    pending = [first]

    async def replayed() -> T:
        if pending:
            raise pending.pop()
        return await attempt()
    return replayed


def _holding(slots: EndpointSlots, attempt: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
    async def limited() -> T:
        async with slots:
            return await attempt()
    return limited


def _transient_but_no_timeout(error: BaseException) -> bool:
    return is_transient(error) and not is_timeout(error)


class RetryFailed(Exception):
    """Every attempt of a call failed; carries the last error and how many retries were made."""

    def __init__(self, error: Exception, retries: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.retries = retries
