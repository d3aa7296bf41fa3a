"""The fault injector: seeded fault counts match the rate, each kind fails as a real endpoint does, and
pool YAML turns it on."""

from __future__ import annotations

import asyncio
import math
from collections import Counter

import openai
import pytest

from reso.agents.adapters.faults import (
    FAULT_KINDS,
    FaultConfig,
    FaultyChatModel,
    fault_for,
    with_faults,
)
from reso.agents.adapters.loader import load_chat_model
from reso.agents.pool import PoolError, pool_from_dict
from reso.reward.answers import extract_answer
from tests.fakes import ScriptedChatModel, reply


def fault_counts(config: FaultConfig, calls: int) -> Counter[str]:
    """How many of the first `calls` calls get each fault kind."""
    return Counter(kind for i in range(calls) if (kind := fault_for(config, i)) is not None)


def _faulty(kind: str, **options) -> FaultyChatModel:
    inner = ScriptedChatModel(default=reply("x = \\boxed{7}", input_tokens=5, output_tokens=3))
    return FaultyChatModel(inner=inner, faults=FaultConfig(rate=1.0, kinds=(kind,), **options))


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_fault_counts_at_a_seed_match_the_rate(rate: float) -> None:
    calls = 6000
    counts = fault_counts(FaultConfig(rate=rate, seed=0), calls)
    total = sum(counts.values())
    sigma = math.sqrt(calls * rate * (1 - rate))
    assert abs(total - rate * calls) <= 3 * sigma
    assert set(counts) == set(FAULT_KINDS)
    share = total / len(FAULT_KINDS)
    for kind in FAULT_KINDS:  # kinds drawn uniformly among the faulty calls
        assert abs(counts[kind] - share) <= 4 * math.sqrt(share)


def test_faults_are_fixed_per_call_index_and_seed() -> None:
    config = FaultConfig(rate=0.3, seed=4)
    first = [fault_for(config, i) for i in range(500)]
    assert first == [fault_for(config, i) for i in range(500)]
    assert first != [fault_for(FaultConfig(rate=0.3, seed=5), i) for i in range(500)]
    assert fault_counts(FaultConfig(rate=0.0), 1000) == {}
    assert sum(fault_counts(FaultConfig(rate=1.0, kinds=("empty",)), 100).values()) == 100


def test_the_wrapper_counts_what_it_injects_and_passes_the_rest_through() -> None:
    inner = ScriptedChatModel(default=reply("so \\boxed{7}", input_tokens=5, output_tokens=3))
    model = FaultyChatModel(inner=inner, faults=FaultConfig(rate=0.5, kinds=("empty",), seed=1))
    texts = [asyncio.run(model.ainvoke("hi")).text for _ in range(40)]
    expected = fault_counts(model.faults, 40)["empty"]
    assert texts.count("") == expected == model.injected["empty"]
    assert inner.call_count == 40 - expected
    assert model.calls == 40
    assert model.cache is False  # a response cache must not hide calls from the injector


def test_a_rate_limit_is_the_openai_error_with_retry_after() -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        asyncio.run(_faulty("rate_limit", retry_after_s=0.2).ainvoke("hi"))
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "0.2"


def test_server_errors_and_timeouts() -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        asyncio.run(_faulty("server_error").ainvoke("hi"))
    assert caught.value.status_code == 500
    with pytest.raises(openai.APITimeoutError):
        asyncio.run(_faulty("timeout").ainvoke("hi"))
    with pytest.raises(TimeoutError):
        asyncio.run(_faulty("timeout", hang_s=0.01).ainvoke("hi"))
    with pytest.raises(TimeoutError):  # the caller's own limit fires before a long hang ends
        asyncio.run(asyncio.wait_for(_faulty("timeout", hang_s=30.0).ainvoke("hi"), 0.05))
    with pytest.raises(openai.InternalServerError):
        _faulty("server_error").invoke("hi")


@pytest.mark.parametrize("kind", ["empty", "no_answer", "garbage"])
def test_bad_replies_carry_no_extractable_answer(kind: str) -> None:
    model = _faulty(kind)
    texts = {asyncio.run(model.ainvoke("hi")).text for _ in range(5)}
    for text in texts:
        assert extract_answer(text) is None
        assert not any(ch.isdigit() for ch in text)
    assert (texts == {""}) == (kind == "empty")


def test_pool_yaml_turns_faults_on_and_names_a_bad_field() -> None:
    pool = pool_from_dict({"name": "p", "models": [{"spec": "tool:calculator", "name": "calc",
                                                    "faults": {"rate": 0.25, "kinds": ["rate_limit"], "seed": 3,
                                                               "retry_after_s": 0.05}}],
                           "roles": ["Algebra"]})
    model = load_chat_model(pool[0].model)
    assert isinstance(model, FaultyChatModel)
    assert model.faults == FaultConfig(rate=0.25, kinds=("rate_limit",), seed=3, retry_after_s=0.05)
    with pytest.raises(PoolError, match="faults"):
        pool_from_dict({"models": [{"spec": "tool:calculator", "faults": {"rate": 0.1, "kinds": ["meteor"]}}],
                        "roles": ["Algebra"]})
    with pytest.raises(PoolError, match="rate"):
        pool_from_dict({"models": [{"spec": "tool:calculator", "faults": {"rate": 1.5}}], "roles": ["Algebra"]})


def test_rate_zero_leaves_the_model_unwrapped() -> None:
    inner = ScriptedChatModel(default="ok")
    assert with_faults(inner, FaultConfig(rate=0.0)) is inner
    assert with_faults(inner, None) is inner


def test_models_of_one_pool_do_not_fail_in_step() -> None:
    config = FaultConfig(rate=0.3, seed=0)
    gpt = [fault_for(config, i, "gpt-4") is not None for i in range(400)]
    mixtral = [fault_for(config, i, "mixtral") is not None for i in range(400)]
    assert gpt != mixtral
    pool = pool_from_dict({"models": [{"spec": "tool:calculator", "name": "calc", "faults": {"rate": 0.3}}],
                           "roles": ["Algebra"]})
    assert load_chat_model(pool[0].model).fault_stream == "calc"
