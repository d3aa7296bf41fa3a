"""Per-endpoint concurrency: the slot pool, which endpoints share one, and the agent call path that uses it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from reso.agents.adapters.endpoints import (
    EndpointSlots,
    concurrency_limit,
    endpoint_key,
    endpoint_slots,
    is_local_url,
)
from reso.agents.adapters.faults import server_error
from reso.agents.adapters.invoke import call_agent
from reso.agents.adapters.retry import RetryPolicy
from reso.agents.profiles import Agent, ModelSpec
from tests.fakes import ScriptedChatModel

LOCAL = "http://127.0.0.1:8080/v1"


class InFlightModel(BaseChatModel):
    """Answers after `delay_s`, recording the most calls it ever had in flight at once.

    With `gather` set, calls are held until that many are in flight together (or `hold_s` passes), so a
    limit is reached however slowly the machine starts the calls.
    """

    delay_s: float = 0.02
    gather: int = 0
    hold_s: float = 5.0
    cache: bool | None = False  # every call must reach the model
    _gathered: asyncio.Event | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _now: int = PrivateAttr(default=0)
    _peak: int = PrivateAttr(default=0)
    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "in-flight-fake"

    @property
    def peak(self) -> int:
        return self._peak

    @property
    def calls(self) -> int:
        return self._calls

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        raise NotImplementedError("async only")

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                         **kwargs: Any) -> ChatResult:
        if self._gathered is None:
            self._gathered = asyncio.Event()
        with self._lock:
            self._now += 1
            self._calls += 1
            self._peak = max(self._peak, self._now)
            if self.gather and self._now >= self.gather:
                self._gathered.set()
        try:
            if self.gather:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._gathered.wait(), self.hold_s)
            await asyncio.sleep(self.delay_s)
        finally:
            with self._lock:
                self._now -= 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage("so \\boxed{7}"))])


def _agent(base_url: str | None = LOCAL, **params: Any) -> Agent:
    spec = ModelSpec(spec="openai:served", base_url=base_url, price_in=0.0, price_out=0.0, params=params)
    return Agent(id="served/algebra", model=spec, role="Algebra", profile="Solves algebra.",
                 system_prompt="You are an algebra expert.", price_in=0.0, price_out=0.0)


# -- EndpointSlots ---------------------------------------------------------------------------------------------

async def test_slots_admit_at_most_the_limit_in_first_come_order() -> None:
    slots = EndpointSlots(2)
    order: list[int] = []
    peak = 0

    async def hold(i: int) -> None:
        nonlocal peak
        async with slots:
            order.append(i)
            peak = max(peak, slots.in_use)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(hold(i) for i in range(7)))
    assert peak == 2
    assert order == list(range(7))
    assert (slots.in_use, slots.waiting) == (0, 0)


async def test_a_cancelled_waiter_leaves_no_slot_taken_and_no_queue() -> None:
    slots = EndpointSlots(1)
    await slots.acquire()
    waiter = asyncio.create_task(slots.acquire())
    await asyncio.sleep(0)
    assert slots.waiting == 1
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert (slots.in_use, slots.waiting) == (1, 0)
    slots.release()
    assert slots.in_use == 0
    await asyncio.wait_for(slots.acquire(), 1.0)  # free again
    assert slots.in_use == 1


async def test_a_waiter_cancelled_as_the_slot_reaches_it_passes_the_slot_on() -> None:
    slots = EndpointSlots(1)
    await slots.acquire()
    first = asyncio.create_task(slots.acquire())
    second = asyncio.create_task(slots.acquire())
    await asyncio.sleep(0)
    slots.release()  # the hand-over to `first` is scheduled on the loop ...
    first.cancel()   # ... and `first` is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 1.0)
    assert (slots.in_use, slots.waiting) == (1, 0)


def test_slots_serve_several_event_loops_in_turn_and_at_once() -> None:
    slots = EndpointSlots(1)

    async def contend() -> None:
        async def hold() -> None:
            async with slots:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(asyncio.gather(hold(), hold()), 5.0)

    # One loop after another: an asyncio.Semaphore would stay bound to the first loop that waited on it.
    for _ in range(2):
        asyncio.run(contend())

    # Two loops at once, in two threads: the second waits for the first's slot and is woken on its own loop.
    held = threading.Event()
    done: list[str] = []

    async def first() -> None:
        async with slots:
            held.set()
            await asyncio.sleep(0.05)
            done.append("first")

    async def second() -> None:
        held.wait(5.0)
        async with slots:
            done.append("second")

    thread = threading.Thread(target=asyncio.run, args=(first(),))
    thread.start()
    asyncio.run(asyncio.wait_for(second(), 5.0))
    thread.join(5.0)
    assert done == ["first", "second"]
    assert slots.in_use == 0


def test_slots_refuse_a_limit_below_one() -> None:
    with pytest.raises(ValueError, match="positive integer, got 0"):
        EndpointSlots(0)


# -- which endpoints are limited, and which share ---------------------------------------------------------------

@pytest.mark.parametrize(("url", "local"), [
    ("http://localhost:8000/v1", True), ("http://127.0.0.1:8080/v1", True), ("http://[::1]:8000/v1", True),
    ("http://192.168.1.20:11434/v1", True), ("http://10.0.0.7/v1", True),
    ("https://api.openai.com/v1", False), ("https://generativelanguage.googleapis.com/v1beta/openai/", False),
    ("http://8.8.8.8/v1", False), ("http://gpu-box:8000/v1", False),
])
def test_local_urls(url: str, local: bool) -> None:
    assert is_local_url(url) is local


def test_the_limit_a_model_asks_for() -> None:
    assert concurrency_limit(_agent().model) == 1  # local server, nothing said
    assert concurrency_limit(_agent(max_concurrency=8).model) == 8
    assert concurrency_limit(_agent(max_concurrency=None).model) is None  # `null`: opt out of the default
    assert concurrency_limit(_agent("https://api.example.com/v1").model) is None
    assert concurrency_limit(_agent(None, max_concurrency=4).model) == 4  # the provider's own endpoint
    with pytest.raises(ValueError, match=r"params\.max_concurrency must be a positive integer or null, got 0"):
        concurrency_limit(_agent(max_concurrency=0).model)


def test_models_on_one_endpoint_share_slots() -> None:
    a = endpoint_slots(_agent("http://127.0.0.1:8080/v1", temperature=0.0).model)
    b = endpoint_slots(_agent("HTTP://127.0.0.1:8080/v1/").model)  # another spelling, another model spec
    other_port = endpoint_slots(_agent("http://127.0.0.1:8081/v1").model)
    wider = endpoint_slots(_agent("http://127.0.0.1:8080/v1", max_concurrency=4).model)
    assert a is b
    assert a is not None and a.limit == 1
    assert other_port is not a and wider is not a
    assert wider is not None and wider.limit == 4
    assert endpoint_slots(_agent("https://api.example.com/v1").model) is None


def test_without_a_base_url_the_provider_api_or_the_in_process_model_is_the_endpoint() -> None:
    assert endpoint_key(ModelSpec(spec="openai:gpt-4o")) == endpoint_key(ModelSpec(spec="openai:gpt-4o-mini")) == "openai"
    assert endpoint_key(ModelSpec(spec="local:/models/a")) != endpoint_key(ModelSpec(spec="local:/models/b"))
    assert endpoint_key(ModelSpec(spec="openai:m", base_url="http://Localhost:8000/v1/")) == "http://localhost:8000/v1"


# -- the agent call path -----------------------------------------------------------------------------------------

async def test_calls_to_a_local_endpoint_go_one_at_a_time() -> None:
    model = InFlightModel()
    answers = await asyncio.gather(*(call_agent(_agent(), model, f"q{i}") for i in range(5)))
    assert all(answer.ok for answer in answers)
    assert (model.calls, model.peak) == (5, 1)


async def test_the_pool_raises_the_limit_or_lifts_it() -> None:
    four = InFlightModel(gather=4)
    await asyncio.gather(*(call_agent(_agent(max_concurrency=4), four, f"q{i}") for i in range(8)))
    assert (four.calls, four.peak) == (8, 4)
    unlimited = InFlightModel(gather=6)
    await asyncio.gather(*(call_agent(_agent(max_concurrency=None), unlimited, f"q{i}") for i in range(6)))
    assert unlimited.peak == 6


async def test_waiting_for_the_slot_is_not_part_of_the_time_limit() -> None:
    # Twelve calls of 0.05 s queue for one slot (0.6 s in all); each attempt alone is far inside 0.5 s.
    model = InFlightModel(delay_s=0.05)
    answers = await asyncio.gather(*(call_agent(_agent(), model, f"q{i}", timeout_s=0.5) for i in range(12)))
    assert [answer.error for answer in answers] == [None] * 12
    assert model.peak == 1


def _policy() -> RetryPolicy:
    async def no_wait(_: float) -> None:
        return None

    return RetryPolicy(attempts=3, initial_s=0.01, jitter_s=0.0, sleep=no_wait)


async def test_a_timeout_is_not_retried_against_a_limited_endpoint() -> None:
    slots = endpoint_slots(_agent().model)  # held here, so the call uses this very limiter
    model = ScriptedChatModel(script=["late \\boxed{1}", "\\boxed{2}"], delay_s=[5.0, 0.0], cache=False)
    answer = await call_agent(_agent(), model, "q", timeout_s=0.05, retry=_policy())
    assert answer.error == "TimeoutError: no answer within 0.05 s"
    assert (answer.retries, model.call_count) == (0, 1)
    assert slots is endpoint_slots(_agent().model) and slots.in_use == 0  # the slot came back


async def test_a_timeout_is_still_retried_against_an_unlimited_endpoint() -> None:
    model = ScriptedChatModel(script=["late \\boxed{1}", "\\boxed{2}"], delay_s=[5.0, 0.0], cache=False)
    answer = await call_agent(_agent(max_concurrency=None), model, "q", timeout_s=0.05, retry=_policy())
    assert answer.ok and answer.text == "\\boxed{2}"
    assert (answer.retries, model.call_count) == (1, 2)


async def test_a_server_error_is_retried_against_a_limited_endpoint() -> None:
    model = ScriptedChatModel(script=[server_error(), "\\boxed{2}"], cache=False)
    answer = await call_agent(_agent(), model, "q", retry=_policy())
    assert answer.ok and (answer.retries, model.call_count) == (1, 2)
