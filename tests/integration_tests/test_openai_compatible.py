"""An OpenAI-compatible endpoint end to end: a local stub server, the loader, call_agent, retries, errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reso.agents.adapters.cache import disable_response_cache, enable_response_cache
from reso.agents.adapters.invoke import call_agent
from reso.agents.adapters.loader import load_chat_model
from reso.agents.profiles import Agent, ModelSpec
from tests.openai_stub import OpenAIStub, StubError, StubReply

CANARY = "sk-canary-integration-9f8e7d6c5b4a"


@pytest.fixture
def canary_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STUB_PROVIDER_KEY", CANARY)
    return "STUB_PROVIDER_KEY"


def _agent(stub: OpenAIStub, key_env: str, **params: object) -> Agent:
    spec = ModelSpec(spec="openai:test-model", base_url=stub.base_url, api_key_env=key_env,
                     price_in=2.0, price_out=8.0, params=params)
    return Agent(id="stub/algebra", model=spec, role="Algebra", profile="Equations.",
                 system_prompt="You are an algebra expert.", price_in=2.0, price_out=8.0)


async def test_answer_usage_cost_and_authorization(canary_key: str) -> None:
    with OpenAIStub([StubReply("x = 4\n\\boxed{4}", prompt_tokens=123, completion_tokens=45)]) as stub:
        agent = _agent(stub, canary_key, temperature=0.0)
        answer = await call_agent(agent, load_chat_model(agent.model), "Solve 2x = 8.")
    assert answer.ok, answer.error
    assert answer.text == "x = 4\n\\boxed{4}"
    assert (answer.input_tokens, answer.output_tokens) == (123, 45)
    assert answer.cost_usd == pytest.approx((123 * 2.0 + 45 * 8.0) / 1e6)
    [request] = stub.chat_requests
    assert request.headers["authorization"] == f"Bearer {CANARY}"
    assert request.body["model"] == "test-model"
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]
    assert request.body["messages"][1]["content"] == "Solve 2x = 8."


async def test_rate_limit_with_retry_after_is_retried_by_the_client(canary_key: str) -> None:
    script = [StubError(429, "slow down", retry_after_s=0.05), StubReply("5", prompt_tokens=9, completion_tokens=1)]
    with OpenAIStub(script) as stub:
        agent = _agent(stub, canary_key, max_retries=2)
        answer = await call_agent(agent, load_chat_model(agent.model), "2 + 3?")
    assert answer.ok and answer.text == "5"
    assert len(stub.chat_requests) == 2


async def test_server_error_is_an_answer_error_without_the_key(canary_key: str) -> None:
    # A careless provider echoing the credential back must not put it in our error line.
    echo = StubError(500, f"internal error for key {CANARY}")
    with OpenAIStub([echo, echo]) as stub:
        agent = _agent(stub, canary_key, max_retries=1)
        answer = await call_agent(agent, load_chat_model(agent.model), "2 + 3?")
    assert not answer.ok and answer.text == ""
    assert answer.error is not None
    assert re.fullmatch(r"\w+Error: Error code: 500 - internal error for key \*\*\*", answer.error)
    assert len(stub.chat_requests) == 2


async def test_slow_endpoint_times_out(canary_key: str) -> None:
    with OpenAIStub([StubReply("late", delay_s=1.0)]) as stub:
        agent = _agent(stub, canary_key, max_retries=0)
        answer = await call_agent(agent, load_chat_model(agent.model), "hi", timeout_s=0.2)
    assert answer.error == "TimeoutError: no answer within 0.2 s"


async def test_cached_rerun_skips_the_server_and_stores_no_key(canary_key: str, tmp_path: Path) -> None:
    cache_file = tmp_path / "responses.sqlite"
    enable_response_cache(cache_file)
    try:
        with OpenAIStub([StubReply("42", prompt_tokens=20, completion_tokens=2)]) as stub:
            agent = _agent(stub, canary_key)
            model = load_chat_model(agent.model)
            first = await call_agent(agent, model, "What is 6 * 7?")
            second = await call_agent(agent, model, "What is 6 * 7?")
    finally:
        disable_response_cache()
    assert first.text == second.text == "42"
    assert (second.input_tokens, second.output_tokens) == (20, 2)
    assert len(stub.chat_requests) == 1
    assert CANARY.encode() not in cache_file.read_bytes()
