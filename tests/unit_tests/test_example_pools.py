"""The shipped example pools load: every model is priced, every role is known; the local-server pool finds
its server through LLAMACPP_BASE_URL or its default."""

from __future__ import annotations

from pathlib import Path

import pytest

from reso.agents.adapters.endpoints import concurrency_limit
from reso.agents.adapters.loader import token_cap_to_request
from reso.agents.pool import PoolError, load_pool, pool_from_dict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "pools"


@pytest.mark.parametrize("name, size", [("paper.yaml", 7 * 9 + 1), ("vllm.yaml", 1 * 4 + 1),
                                        ("llamacpp.yaml", 1 * 4 + 1), ("ollama.yaml", 2 * 4 + 1),
                                        ("llama-server.yaml", 1 * 4 + 1)])
def test_example_pool_loads(name: str, size: int) -> None:
    pool = load_pool(EXAMPLES / name)
    assert len(pool) == size
    assert all(agent.price_in >= 0 and agent.price_out >= 0 for agent in pool)
    assert pool.get("tool/calculator").kind == "tool"


def test_every_example_pool_is_tested_and_holds_no_key() -> None:
    """Each file under examples/pools/ is among those above, and none writes a key: keys come from the
    variable a model's api_key_env names."""
    tested = {"paper.yaml", "vllm.yaml", "llamacpp.yaml", "ollama.yaml", "llama-server.yaml"}
    assert {path.name for path in EXAMPLES.glob("*.yaml")} == tested
    for path in EXAMPLES.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "api_key:" not in text and "sk-" not in text, path.name


# The servers people run on their own machine, at each one's default address (each file's variable moves it).
LOCAL_SERVERS = [
    ("ollama.yaml", "OLLAMA_BASE_URL", "http://localhost:11434/v1", {"qwen2.5:7b", "llama3.1:8b"}),
    ("vllm.yaml", "VLLM_BASE_URL", "http://localhost:8000/v1", {"Qwen/Qwen2.5-7B-Instruct"}),
    ("llama-server.yaml", "LLAMA_SERVER_BASE_URL", "http://localhost:8080/v1", {"qwen2.5-7b-instruct"}),
    ("llamacpp.yaml", "LLAMACPP_BASE_URL", "http://127.0.0.1:8080/v1", {"gemma-3-270m"}),
]


@pytest.mark.parametrize("name, variable, url, served", LOCAL_SERVERS, ids=[row[0] for row in LOCAL_SERVERS])
def test_a_local_server_pool_needs_no_key_and_costs_nothing(monkeypatch: pytest.MonkeyPatch, name: str,
                                                           variable: str, url: str, served: set[str]) -> None:
    monkeypatch.delenv(variable, raising=False)
    models = [agent.model for agent in load_pool(EXAMPLES / name) if agent.kind == "llm"]
    assert {model.target for model in models} == served
    assert {(model.base_url, model.api_key_env) for model in models} == {(url, None)}
    assert {(model.price_in, model.price_out) for model in models} == {(0.0, 0.0)}
    assert all(model.params.get("max_tokens") for model in models)  # a call ends within reso's call limit
    monkeypatch.setenv(variable, "http://gpu-box:9000/v1")
    assert {agent.model.base_url for agent in load_pool(EXAMPLES / name) if agent.kind == "llm"} == {
        "http://gpu-box:9000/v1"}


def test_paper_pool_prices_come_from_the_list_or_the_file() -> None:
    pool = load_pool(EXAMPLES / "paper.yaml")
    assert pool.get("gpt-4o-mini/algebra").price_in == 0.15
    assert pool.get("claude-3-5-sonnet/geometry").price_out == 15.0


def test_the_llamacpp_pool_is_one_free_local_model_capped_for_llama_cpp_python(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLAMACPP_BASE_URL", raising=False)
    pool = load_pool(EXAMPLES / "llamacpp.yaml")
    models = [agent.model for agent in pool if agent.kind == "llm"]
    assert len(models) == 4 and all(model == models[0] for model in models)
    model = models[0]
    assert (model.spec, model.base_url, model.api_key_env) == ("openai:gemma-3-270m", "http://127.0.0.1:8080/v1", None)
    assert {(agent.price_in, agent.price_out) for agent in pool} == {(0.0, 0.0)}
    assert concurrency_limit(model) == 1
    params = {key: value for key, value in model.params.items() if key != "max_concurrency"}
    token_cap_to_request(model, params)  # as the loader sends it: in the body as max_tokens
    assert params == {"temperature": 0.0, "extra_body": {"max_tokens": 256}}


def test_base_url_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMACPP_BASE_URL", "http://10.0.0.7:9000/v1")
    urls = {agent.model.base_url for agent in load_pool(EXAMPLES / "llamacpp.yaml") if agent.kind == "llm"}
    assert urls == {"http://10.0.0.7:9000/v1"}

    monkeypatch.setenv("LLAMACPP_BASE_URL", "")  # empty counts as unset, as in the shell's ${VAR:-default}
    urls = {agent.model.base_url for agent in load_pool(EXAMPLES / "llamacpp.yaml") if agent.kind == "llm"}
    assert urls == {"http://127.0.0.1:8080/v1"}


def test_a_base_url_variable_without_default_must_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESO_TEST_HOST", raising=False)
    document = {"models": [{"spec": "openai:m", "base_url": "http://${RESO_TEST_HOST}:8080/v1",
                            "price_in": 0.0, "price_out": 0.0}], "roles": ["Algebra"]}
    with pytest.raises(PoolError) as error:
        pool_from_dict(document)
    assert str(error.value) == ("pool: models[0].base_url: environment variable RESO_TEST_HOST is not set; set it, "
                                "or give a default as ${RESO_TEST_HOST:-http://…}")

    monkeypatch.setenv("RESO_TEST_HOST", "gpu-box")
    assert pool_from_dict(document)[0].model.base_url == "http://gpu-box:8080/v1"
