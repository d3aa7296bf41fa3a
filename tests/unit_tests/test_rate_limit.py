"""Rate limits from a pool: `params.requests_per_second` becomes the model's LangChain rate limiter."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_openai import ChatOpenAI

from reso.agents.adapters.invoke import models_for_pool
from reso.agents.adapters.load_error import ModelLoadError
from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.replay import ReplayChatModel
from reso.agents.adapters.tools import CalculatorChatModel
from reso.agents.pool import pool_from_dict
from reso.agents.profiles import ModelSpec

REPLAY = "replay:gsm8k_replay_dev.jsonl#gpt-4-1106-preview"


def test_replay_model_gets_the_limiter_and_not_the_keys() -> None:
    # The replay loader rejects unknown params, so loading at all shows the keys were taken out.
    model = load_chat_model(ModelSpec(spec=REPLAY, params={"requests_per_second": 4, "max_bucket_size": 2}))
    assert isinstance(model, ReplayChatModel)
    limiter = model.rate_limiter
    assert isinstance(limiter, InMemoryRateLimiter)
    assert (limiter.requests_per_second, limiter.max_bucket_size) == (4.0, 2.0)


def test_openai_compatible_model_gets_the_limiter_and_no_unknown_kwarg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RATE_TEST_KEY", "sk-rate-test")
    spec = ModelSpec(spec="openai:served", base_url="http://127.0.0.1:9/v1", api_key_env="RATE_TEST_KEY",
                     params={"requests_per_second": 0.5, "temperature": 0.0})
    model = load_chat_model(spec)
    assert isinstance(model, ChatOpenAI)
    assert isinstance(model.rate_limiter, InMemoryRateLimiter)
    assert model.rate_limiter.requests_per_second == 0.5
    # ChatOpenAI moves unknown constructor kwargs into model_kwargs (sent with every request).
    assert model.model_kwargs == {} and model.temperature == 0.0


def test_no_limit_means_no_limiter() -> None:
    assert load_chat_model(REPLAY).rate_limiter is None
    assert load_chat_model("tool:calculator").rate_limiter is None


def test_every_call_acquires_the_limiter(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_chat_model(ModelSpec(spec="tool:calculator", params={"requests_per_second": 1000}))
    assert isinstance(model, CalculatorChatModel)
    acquired: list[bool] = []
    real = model.rate_limiter.aacquire

    async def counting(*, blocking: bool = True) -> bool:
        acquired.append(blocking)
        return await real(blocking=blocking)

    monkeypatch.setattr(model.rate_limiter, "aacquire", counting)

    async def two_calls() -> list[str]:
        return [(await model.ainvoke([HumanMessage(f"calculate 6*{n}")])).text for n in (7, 8)]

    assert asyncio.run(two_calls()) == [model.invoke([HumanMessage("calculate 6*7")]).text,
                                        model.invoke([HumanMessage("calculate 6*8")]).text]
    assert acquired == [True, True]


def test_agents_sharing_a_model_share_one_limiter() -> None:
    model = {"spec": REPLAY, "params": {"requests_per_second": 2}}
    pool = pool_from_dict({"name": "limited", "agents": [
        {"id": "a", "model": model, "role": "Algebra", "profile": "Equations."},
        {"id": "b", "model": model, "role": "Arithmetic", "profile": "Sums."},
    ]})
    models = models_for_pool(pool)
    assert models["a"].rate_limiter is models["b"].rate_limiter
    assert models["a"].rate_limiter.requests_per_second == 2.0


@pytest.mark.parametrize(("params", "message"), [
    ({"requests_per_second": 0}, "params.requests_per_second must be a positive number, got 0"),
    ({"requests_per_second": "fast"}, "params.requests_per_second must be a positive number, got 'fast'"),
    ({"requests_per_second": 1, "max_bucket_size": -1}, "params.max_bucket_size must be a positive number"),
    ({"max_bucket_size": 3}, "need params.requests_per_second"),
])
def test_bad_limits_are_load_errors_naming_the_field(params: dict, message: str) -> None:
    with pytest.raises(ModelLoadError, match="^tool:calculator: .*" + message.replace(".", r"\.")):
        load_chat_model(ModelSpec(spec="tool:calculator", params=params))
