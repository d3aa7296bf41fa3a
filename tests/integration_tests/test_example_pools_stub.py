"""Each example pool for a server people run on their own machine (Ollama, vLLM, llama.cpp's llama-server,
llama-cpp-python's server) answers `reso solve` end to end through the real langchain-openai client, against
a local OpenAI-compatible stub standing in for the server at the address the file's variable gives: the
model is asked by the name the server routes by, the answer cap reaches it as `max_tokens`, and no key is
sent or needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.evals.cli import app
from tests.openai_stub import OpenAIStub, StubReply
from tests.unit_tests.test_example_pools import EXAMPLES, LOCAL_SERVERS

QUESTION = "A farmer has 12 cows and buys 30 more. How many cows does the farmer have now?"


@pytest.mark.parametrize("name, variable, url, served", LOCAL_SERVERS, ids=[row[0] for row in LOCAL_SERVERS])
def test_reso_solve_answers_through_the_example_pool(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str,
                                                     variable: str, url: str, served: set[str]) -> None:
    monkeypatch.chdir(tmp_path)  # nothing written beside the example files
    with OpenAIStub(default=StubReply("12 + 30 = 42. The answer is \\boxed{42}.", prompt_tokens=40,
                                      completion_tokens=12)) as stub:
        monkeypatch.setenv(variable, stub.base_url)
        result = CliRunner().invoke(app, ["solve", QUESTION, "--pool", str(EXAMPLES / name), "--json"],
                                    env={"RESO_DB_URL": ""})
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    assert payload["answer"] == "42"
    assert payload["usage"]["cost_usd"] == 0.0 and payload["usage"]["total_tokens"] > 0
    requests = stub.chat_requests
    assert requests and {request.body["model"] for request in requests} <= served
    assert all(request.body.get("max_tokens") and "max_completion_tokens" not in request.body
               for request in requests)
    assert {request.headers.get("authorization") for request in requests} == {"Bearer not-needed"}
