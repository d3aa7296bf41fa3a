"""A model's `params` keys are checked against what its client takes, read from the libraries
(`reso.agents.adapters.params`): a typo is refused as the pool loads, naming the file, the model and the
key, instead of a TypeError from `AsyncCompletions.create()` at the first call."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI
from openai.resources.chat.completions import AsyncCompletions

from reso.agents.adapters.load_error import ModelLoadError
from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.params import unknown_param
from reso.agents.pool import PoolError, load_pool, pool_from_dict
from reso.agents.profiles import ModelSpec

SERVER = {"spec": "openai:served", "base_url": "http://127.0.0.1:9/v1", "price_in": 0.0, "price_out": 0.0}


def _openai(**params: object) -> ModelSpec:
    return ModelSpec(**SERVER, params=params)  # type: ignore[arg-type]


def test_every_chatopenai_field_and_alias_and_every_create_argument_is_taken() -> None:
    names = {alias for info in ChatOpenAI.model_fields.values() if (alias := info.alias)}
    names |= set(ChatOpenAI.model_fields)
    names |= {name for name, parameter in inspect.signature(AsyncCompletions.create).parameters.items()
              if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "messages"}  # the prompt's
    for name in sorted(names):
        assert unknown_param(_openai(**{name: None})) is None, name


def test_this_projects_own_keys_are_taken() -> None:
    spec = _openai(requests_per_second=2, max_bucket_size=2, check_every_n_seconds=0.1, max_concurrency=2,
                   max_tokens_param="max_tokens", max_tokens=64, extra_body={"top_k": 5},
                   model_kwargs={"parallel_tool_calls": False})
    assert unknown_param(spec) is None


@pytest.mark.parametrize(("spec", "params", "message"), [
    ("openai:gpt-4o-mini", {"max_tokns": 256}, "params.max_tokns: not a parameter of the openai client "
     "(ChatOpenAI, chat.completions.create); did you mean max_tokens? (a server's own fields go under "
     "params.extra_body)"),
    ("openai:served", {"top_k": 5}, "params.top_k: not a parameter of the openai client"),
    ("openai:served", {"model_kwargs": {"repetition_penalty": 1.1}},
     "params.model_kwargs.repetition_penalty: not a parameter of chat.completions.create"),
    ("local:/nowhere/model", {"max_new_tokns": 8}, "params.max_new_tokns: not a parameter of local models; "
     "did you mean max_new_tokens?"),
    ("tool:calculator", {"precision": 3}, "params.precision: not a parameter of tool:calculator"),
    ("replay:gsm8k_replay_dev.jsonl#gpt-4-1106-preview", {"prefix": "x"},
     "params.prefix: not a parameter of replay models; did you mean prefix_path?"),
])
def test_a_key_the_client_does_not_take_is_named(spec: str, params: dict, message: str) -> None:
    assert (unknown_param(ModelSpec(spec=spec, params=params)) or "").startswith(message)


def test_a_provider_whose_keys_are_not_known_here_is_left_to_its_client() -> None:
    assert unknown_param(ModelSpec(spec="anthropic:claude-x", params={"anything": 1})) is None


def test_the_pool_names_its_file_the_model_and_the_key(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text("models:\n  - spec: openai:served\n    base_url: http://127.0.0.1:9/v1\n    price_in: 0\n"
                    "    price_out: 0\n    params: {temperature: 0, max_tokns: 9}\nroles: [Algebra]\n"
                    "agents:\n  - model: {spec: 'tool:calculator', params: {digits: 3}}\n    role: r\n"
                    "    profile: p\n")
    with pytest.raises(PoolError) as raised:
        load_pool(pool)
    assert str(raised.value).startswith(f"{pool.resolve()}: models[0] (served): params.max_tokns: not a parameter")
    with pytest.raises(PoolError, match=r"^pool: agents\[0\]\.model \(calculator\): params\.digits: not a"):
        pool_from_dict({"agents": [{"model": {"spec": "tool:calculator", "params": {"digits": 3}}, "role": "r",
                                    "profile": "p"}]})


def test_a_model_made_in_code_is_refused_when_loaded() -> None:
    with pytest.raises(ModelLoadError, match=r"openai:served: params\.max_tokns: not a parameter"):
        load_chat_model(_openai(max_tokns=5))
    assert isinstance(load_chat_model(_openai(max_tokens=5, temperature=0.0)), ChatOpenAI)
