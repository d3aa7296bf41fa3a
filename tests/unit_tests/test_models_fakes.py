"""The scripted fake chat models other tests build on: order, keys, usage, delays, errors, exhaustion."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage

from tests.fakes import ScriptedChatModel, ScriptExhausted, Slow, reply, scripted_models


def test_script_order_usage_and_exceptions() -> None:
    model = ScriptedChatModel(script=["one two three", reply("x", input_tokens=12, output_tokens=3),
                                      ValueError("scripted failure")])
    first = model.invoke("a b")
    assert first.text == "one two three"
    assert first.usage_metadata == {"input_tokens": 2, "output_tokens": 3, "total_tokens": 5}
    assert model.invoke("hi").usage_metadata == {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    with pytest.raises(ValueError, match="scripted failure"):
        model.invoke("hi")
    with pytest.raises(ScriptExhausted, match="script exhausted after 3 replies"):
        model.invoke("hi")
    assert model.call_count == 4 and model.calls[0][0].text == "a b"


def test_prompt_keys_callables_default_and_cycle() -> None:
    model = ScriptedChatModel(by_prompt={"eggs": "18", "Janet's eggs": "nine"},
                              script=[lambda messages: f"echo {messages[-1].text}"], default="fallback")
    assert model.invoke("How many Janet's eggs?").text == "nine"  # the longest matching key wins
    assert model.invoke("eggs?").text == "18"
    assert model.invoke("other").text == "echo other"
    assert model.invoke("other").text == "fallback"
    cycling = ScriptedChatModel(script=["a", "b"], cycle=True)
    assert [cycling.invoke("q").text for _ in range(3)] == ["a", "b", "a"]
    assert cycling.bind_tools([]) is cycling


async def test_async_delays_let_later_calls_finish_first() -> None:
    model = ScriptedChatModel(by_prompt={"slow": Slow("S", 0.05), "fast": "F"})
    finished: list[str] = []

    async def ask(prompt: str) -> None:
        finished.append((await model.ainvoke(prompt)).text)

    await asyncio.gather(ask("slow"), ask("fast"))
    assert finished == ["F", "S"]
    timed = ScriptedChatModel(script=["a", "b"], delay_s=[0.0, 0.01])
    assert [timed.invoke("q").text for _ in range(2)] == ["a", "b"]


def test_metadata_and_one_model_per_key() -> None:
    models = scripted_models({"gpt": [AIMessage(content="4")], "mixtral": ["5"]})
    assert models["gpt"].invoke("q").response_metadata["model_name"] == "gpt"
    assert models["mixtral"].invoke("q").text == "5"
