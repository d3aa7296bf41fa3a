"""Retries of transient call failures: Retry-After honoured, exponential backoff otherwise, permanent errors
not retried, retries counted on the answer; OpenAI clients leave retrying to this layer."""

from __future__ import annotations

import asyncio
import email.utils

import httpx
import openai
import pytest

from reso.agents.adapters.faults import rate_limit_error, server_error
from reso.agents.adapters.invoke import call_agent
from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.retry import RetryPolicy, is_transient, retry_after_s
from reso.agents.pool import pool_from_dict
from reso.agents.profiles import ModelSpec
from tests.fakes import ScriptedChatModel, Slow


class WaitRecorder:
    """Stands in for asyncio.sleep: records the waits asked for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _agent():
    return pool_from_dict({"agents": [{"id": "a", "model": {"spec": "fake:a", "price_in": 1.0, "price_out": 1.0},
                                       "role": "Algebra", "profile": "Solves algebra."}]})[0]


def _call(model, policy, **kwargs):
    return asyncio.run(call_agent(_agent(), model, "What is 3 + 4?", retry=policy, **kwargs))


def _error(status: int, cls=openai.APIStatusError, headers=None):
    response = httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://x.invalid"))
    return cls(f"status {status}", response=response, body=None)


def test_a_429_with_retry_after_is_retried_after_at_least_that_long() -> None:
    sleep = WaitRecorder()
    model = ScriptedChatModel(script=[rate_limit_error(0.2), "so \\boxed{7}"])
    answer = _call(model, RetryPolicy(attempts=3, initial_s=0.01, jitter_s=0.0, sleep=sleep))
    assert answer.ok and answer.text == "so \\boxed{7}"
    assert answer.retries == 1 and model.call_count == 2
    assert sleep.waits == [pytest.approx(0.2)]
    assert sleep.waits[0] >= 0.2


def test_without_retry_after_the_backoff_grows_exponentially_with_bounded_jitter() -> None:
    sleep = WaitRecorder()
    model = ScriptedChatModel(script=[server_error(), server_error(), server_error(), "\\boxed{1}"])
    answer = _call(model, RetryPolicy(attempts=4, initial_s=0.5, max_backoff_s=10.0, jitter_s=0.1, sleep=sleep))
    assert answer.ok and answer.retries == 3
    assert len(sleep.waits) == 3
    for wait, base in zip(sleep.waits, (0.5, 1.0, 2.0), strict=True):
        assert base <= wait <= base + 0.1


def test_attempts_run_out_and_the_last_error_is_recorded() -> None:
    sleep = WaitRecorder()
    model = ScriptedChatModel(default=server_error())
    answer = _call(model, RetryPolicy(attempts=3, initial_s=0.0, jitter_s=0.0, sleep=sleep))
    assert not answer.ok and answer.error.startswith("InternalServerError")
    assert answer.retries == 2 and model.call_count == 3 and len(sleep.waits) == 2


@pytest.mark.parametrize("error", [
    ValueError("bad arguments"),
    _error(400, openai.BadRequestError),
    _error(401, openai.AuthenticationError),
    _error(404, openai.NotFoundError),
])
def test_permanent_errors_are_not_retried(error: Exception) -> None:
    sleep = WaitRecorder()
    model = ScriptedChatModel(default=error)
    answer = _call(model, RetryPolicy(attempts=5, sleep=sleep))
    assert not answer.ok and answer.retries == 0
    assert model.call_count == 1 and sleep.waits == []


def test_a_retry_after_longer_than_the_cap_is_not_waited_for() -> None:
    sleep = WaitRecorder()
    model = ScriptedChatModel(script=[rate_limit_error(3600), "\\boxed{1}"])
    answer = _call(model, RetryPolicy(attempts=3, max_retry_after_s=30.0, sleep=sleep))
    assert answer.error.startswith("RateLimitError") and answer.retries == 0 and sleep.waits == []


def test_each_attempt_gets_the_time_limit_and_a_timeout_is_retried() -> None:
    sleep = WaitRecorder()
    model = ScriptedChatModel(script=[Slow("late \\boxed{1}", 5.0), "\\boxed{2}"])
    answer = _call(model, RetryPolicy(attempts=2, sleep=sleep), timeout_s=0.05)
    assert answer.text == "\\boxed{2}" and answer.retries == 1


def test_no_policy_means_one_attempt() -> None:
    model = ScriptedChatModel(script=[server_error(), "\\boxed{2}"])
    answer = asyncio.run(call_agent(_agent(), model, "hi"))
    assert answer.error.startswith("InternalServerError") and answer.retries == 0 and model.call_count == 1


def test_which_errors_are_transient() -> None:
    assert is_transient(TimeoutError()) and is_transient(ConnectionError())
    assert is_transient(openai.APIConnectionError(request=httpx.Request("POST", "http://x.invalid")))
    for status in (408, 409, 429, 500, 502, 503):
        assert is_transient(_error(status))
    for status in (400, 401, 403, 404, 422):
        assert not is_transient(_error(status))
    assert not is_transient(ValueError("nope"))


def test_retry_after_forms() -> None:
    assert retry_after_s(_error(429, headers={"retry-after": "2"})) == 2.0
    assert retry_after_s(_error(429, headers={"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert retry_after_s(_error(429, headers={"retry-after": date}), now=1_000_000.0) == pytest.approx(30.0)
    assert retry_after_s(_error(429)) is None
    assert retry_after_s(ValueError("x")) is None


def test_openai_clients_leave_retrying_to_our_layer_unless_the_pool_says_otherwise() -> None:
    plain = load_chat_model(ModelSpec(spec="openai:m", base_url="http://127.0.0.1:9/v1"))
    assert plain.max_retries == 0
    kept = load_chat_model(ModelSpec(spec="openai:m", base_url="http://127.0.0.1:9/v1", params={"max_retries": 4}))
    assert kept.max_retries == 4


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=0)
    with pytest.raises(ValueError, match="initial_s"):
        RetryPolicy(initial_s=-1)
