"""The output-token cap reaches each endpoint under the field it honours: the JSON body langchain-openai sends
is read off an in-memory HTTP transport (no socket), so the test sees what a server would."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from reso.agents.adapters.load_error import ModelLoadError
from reso.agents.adapters.loader import default_token_param, load_chat_model
from reso.agents.profiles import ModelSpec

# langchain-openai probes socket options with an unconnected socket at construction; nothing is sent.
pytestmark = pytest.mark.filterwarnings("ignore:A test tried to use socket")

COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "\\boxed{4}"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
}


def _sent_body(base_url: str | None, monkeypatch: pytest.MonkeyPatch, **params: Any) -> dict[str, Any]:
    """The JSON body of one chat call to a model loaded with `params`."""
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=COMPLETION)

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    spec = ModelSpec(spec="openai:m", base_url=base_url,
                     params={**params, "http_client": httpx.Client(transport=httpx.MockTransport(handler))})
    reply = load_chat_model(spec).invoke("What is 2 + 2?")
    assert reply.text == "\\boxed{4}" and reply.usage_metadata["output_tokens"] == 3
    [body] = bodies
    return body


def test_a_base_url_server_gets_plain_max_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _sent_body("http://127.0.0.1:8080/v1", monkeypatch, max_tokens=128, temperature=0.2)
    assert body["max_tokens"] == 128 and "max_completion_tokens" not in body
    assert body["temperature"] == 0.2


def test_the_newer_name_in_a_pool_is_the_same_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _sent_body("https://api.deepseek.example/v1", monkeypatch, max_completion_tokens=64)
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body


def test_openai_itself_gets_max_completion_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    for base_url in (None, "https://api.openai.com/v1"):
        body = _sent_body(base_url, monkeypatch, max_tokens=256)
        assert body["max_completion_tokens"] == 256 and "max_tokens" not in body


def test_the_pool_chooses_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _sent_body("http://127.0.0.1:8000/v1", monkeypatch, max_tokens=32, max_tokens_param="max_completion_tokens")
    assert body["max_completion_tokens"] == 32 and "max_tokens" not in body
    body = _sent_body(None, monkeypatch, max_tokens=32, max_tokens_param="max_tokens")
    assert body["max_tokens"] == 32 and "max_completion_tokens" not in body
    assert "max_tokens_param" not in body


def test_other_extra_body_keys_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _sent_body("http://127.0.0.1:8080/v1", monkeypatch, max_tokens=16, extra_body={"top_k": 5})
    assert (body["max_tokens"], body["top_k"]) == (16, 5)


def test_no_cap_sends_none(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _sent_body("http://127.0.0.1:8080/v1", monkeypatch, max_concurrency=2)
    assert "max_tokens" not in body and "max_completion_tokens" not in body and "max_concurrency" not in body


def test_default_field_by_endpoint() -> None:
    assert default_token_param(ModelSpec(spec="openai:gpt-4o-mini")) == "max_completion_tokens"
    assert default_token_param(ModelSpec(spec="openai:m", base_url="https://API.openai.com/v1")) == "max_completion_tokens"
    assert default_token_param(ModelSpec(spec="openai:m", base_url="http://localhost:11434/v1")) == "max_tokens"


@pytest.mark.parametrize(("spec", "params", "message"), [
    ("openai:m", {"max_tokens": 8, "max_completion_tokens": 8},
     "openai:m: params give the token cap more than once: max_tokens, max_completion_tokens"),
    ("openai:m", {"max_tokens": 8, "extra_body": {"max_tokens": 8}},
     "openai:m: params give the token cap more than once: max_tokens, extra_body.max_tokens"),
    ("openai:m", {"max_tokens_param": "max_new_tokens"},
     "openai:m: params.max_tokens_param must be one of ['max_tokens', 'max_completion_tokens'], got 'max_new_tokens'"),
    ("openai:m", {"max_concurrency": 0},
     "openai:m: params.max_concurrency must be a positive integer or null, got 0"),
    ("openai:m", {"max_concurrency": "two"},
     "openai:m: params.max_concurrency must be a positive integer or null, got 'two'"),
    ("tool:calculator", {"max_tokens_param": "max_tokens"},
     "tool:calculator: params.max_tokens_param applies to openai: models only"),
])
def test_bad_values_are_load_errors_naming_the_param(spec: str, params: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelLoadError) as caught:
        load_chat_model(ModelSpec(spec=spec, base_url="http://127.0.0.1:9/v1" if spec.startswith("openai") else None,
                                  params=params))
    assert str(caught.value) == message


@pytest.mark.parametrize(("params", "message"), [
    ("{max_concurrency: 0}", "error: openai:m: params.max_concurrency must be a positive integer or null, got 0"),
    ("{max_tokens: 5, max_completion_tokens: 5}",
     "error: openai:m: params give the token cap more than once: max_tokens, max_completion_tokens"),
])
def test_reso_solve_refuses_a_bad_endpoint_option_in_one_line(tmp_path, params: str, message: str) -> None:
    from typer.testing import CliRunner

    from reso.evals.cli import app

    pool = tmp_path / "pool.yaml"
    pool.write_text("models:\n  - spec: openai:m\n    base_url: http://127.0.0.1:9/v1\n    price_in: 0.0\n"
                    f"    price_out: 0.0\n    params: {params}\nroles: [Algebra]\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["solve", "What is 2+2?", "--pool", str(pool)], env={"COLUMNS": "200"})
    assert (result.exit_code, result.stdout, result.stderr.strip().splitlines()) == (2, "", [message])
