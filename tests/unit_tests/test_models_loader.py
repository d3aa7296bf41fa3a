"""load_chat_model: one loader for provider specs, OpenAI-compatible endpoints, replay and tool agents."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI

from reso.agents.adapters.load_error import ModelLoadError
from reso.agents.adapters.loader import load_chat_model
from reso.agents.adapters.replay import ReplayChatModel
from reso.agents.adapters.tools import CalculatorChatModel
from reso.agents.profiles import ModelSpec

CANARY = "sk-canary-do-not-leak-0123456789"

# langchain-openai probes socket options with an unconnected socket at construction; nothing is sent.
pytestmark = pytest.mark.filterwarnings("ignore:A test tried to use socket")


def test_provider_spec_goes_through_init_chat_model_with_params(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    model = load_chat_model(ModelSpec(spec="openai:gpt-4o-mini", params={"temperature": 0.3, "max_retries": 5}))
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.temperature, model.max_retries) == ("gpt-4o-mini", 0.3, 5)


def test_openai_compatible_endpoint_reads_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_API_KEY", CANARY)
    spec = ModelSpec(spec="openai:Qwen/Qwen2.5-7B-Instruct", base_url="http://127.0.0.1:8000/v1",
                     api_key_env="VLLM_API_KEY", params={"temperature": 0.0})
    model = load_chat_model(spec)
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://127.0.0.1:8000/v1"
    assert model.model_name == "Qwen/Qwen2.5-7B-Instruct"
    assert model.openai_api_key.get_secret_value() == CANARY
    assert CANARY not in repr(model) and CANARY not in str(model.model_dump())


def test_missing_key_variable_is_named_and_no_value_leaks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISSING_PROVIDER_KEY", raising=False)
    spec = ModelSpec(spec="openai:deepseek-chat", base_url="https://example.invalid/v1",
                     api_key_env="MISSING_PROVIDER_KEY")
    with pytest.raises(ModelLoadError, match="environment variable MISSING_PROVIDER_KEY .* not set"):
        load_chat_model(spec)


def test_keyless_local_server_gets_a_placeholder_not_the_users_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    model = load_chat_model(ModelSpec(spec="openai:llama3", base_url="http://127.0.0.1:11434/v1"))
    assert model.openai_api_key.get_secret_value() != CANARY


def test_unknown_provider_and_missing_credentials_are_load_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelLoadError, match="nosuchprovider:model"):
        load_chat_model("nosuchprovider:model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelLoadError, match="openai:gpt-4o-mini: .*OPENAI_API_KEY"):
        load_chat_model("openai:gpt-4o-mini")


def test_replay_and_tool_specs() -> None:
    replay = load_chat_model("replay:gsm8k_replay_dev.jsonl#gpt-4-1106-preview")
    assert isinstance(replay, ReplayChatModel) and replay.recorded_model == "gpt-4-1106-preview"
    assert isinstance(load_chat_model(ModelSpec(spec="tool:calculator")), CalculatorChatModel)


def test_local_spec_with_a_missing_path_is_a_load_error(tmp_path) -> None:
    with pytest.raises(ModelLoadError, match="no such file or folder"):
        load_chat_model(f"local:{tmp_path / 'nothing-here'}")
