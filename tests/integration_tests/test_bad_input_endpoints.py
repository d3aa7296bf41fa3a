"""Bad endpoints through the real `reso` command line, against a local OpenAI-compatible stub and a closed
port on 127.0.0.1: a wrong API key and an unreachable server. The input files are fine, so these are run
failures (exit code 1 for `reso solve`), told in one `error:` line that names the cause and never the key;
an evaluation keeps every item in results.jsonl with its error. See docs/bad-input.md.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reso.evals.cli import app
from tests.openai_stub import OpenAIStub, StubError

KEY = "sk-canary-9f8e7d6c5b4a"
KEY_VAR = "RESO_ENDPOINT_TEST_KEY"
REJECTED = StubError(401, f"Incorrect API key provided: {KEY}. You can find your API key at ...")

POOL = """\
models:
  - spec: openai:stub-model
    base_url: {url}
    api_key_env: {var}
    price_in: 1.0
    price_out: 2.0
roles: [Algebra]
"""
QUESTIONS = [{"id": f"q{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(1, 4)]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens once the socket is closed


def write_pool(folder: Path, url: str) -> Path:
    # One file per test: teams are cached per pool path, and each test's server is a new one.
    path = folder / "pool.yaml"
    path.write_text(POOL.format(url=url, var=KEY_VAR), encoding="utf-8")
    return path


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def assert_no_key(result) -> None:
    assert KEY not in result.stdout and KEY not in result.stderr
    assert "Traceback" not in result.stderr


def test_solve_with_a_rejected_key_says_so_in_one_line(tmp_path: Path) -> None:
    with OpenAIStub(default=REJECTED) as stub:
        result = invoke("solve", "What is 2 + 2?", "--pool", str(write_pool(tmp_path, stub.base_url)), "--json")
        assert stub.chat_requests, "the call was never made"
    assert result.exit_code == 1
    assert json.loads(result.stdout.strip().splitlines()[-1])["answer"] is None
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: no answer: every candidate failed: OpenAIAuthenticationError: Error code: 401 - "
                      "Incorrect API key provided: ***. You can find your API key at ..."]
    assert_no_key(result)


def test_solve_with_an_unreachable_endpoint_says_so_in_one_line(tmp_path: Path) -> None:
    result = invoke("solve", "What is 2 + 2?", "--pool", str(write_pool(tmp_path, closed_port_url())), "--json")
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: no answer: every candidate failed: OpenAIConnectionError: Connection error."]
    assert_no_key(result)


def _eval_with_a_rejected_key(tmp_path: Path):
    dataset = tmp_path / "questions.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in QUESTIONS), encoding="utf-8")
    out = tmp_path / "run"
    with OpenAIStub(default=REJECTED) as stub:
        result = invoke("eval", "--dataset", str(dataset), "--pool", str(write_pool(tmp_path, stub.base_url)),
                        "--out", str(out), "--quiet", "--set", "run.cache=false")
    return result, out


def test_eval_with_a_rejected_key_keeps_every_item_with_its_error(tmp_path: Path) -> None:
    result, out = _eval_with_a_rejected_key(tmp_path)
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(row["id"] for row in rows) == ["q1", "q2", "q3"]
    for row in rows:
        assert row["answer"] is None and row["status"] == "failed"
        errors = [c["error"] for step in row["steps"] for c in step["candidates"]]
        assert errors and all(error.startswith("OpenAIAuthenticationError: Error code: 401") for error in errors)
        assert KEY not in json.dumps(row)
    assert_no_key(result)


def test_eval_where_every_call_failed_exits_1_with_one_error_line(tmp_path: Path) -> None:
    result, _ = _eval_with_a_rejected_key(tmp_path)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "OpenAIAuthenticationError" in errors[0]


def test_plan_with_a_rejected_planner_key_falls_back_with_scrubbed_notes(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAIStub(default=REJECTED) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        result = invoke("plan", "What is 2 + 3, then times 4?", "--planner", "llm",
                        "--planner-model", "openai:gpt-4o-mini", "--json")
        assert stub.chat_requests
    assert result.exit_code == 0
    assert len(json.loads(result.stdout)["plan"]) == 1
    assert ("note: attempt 1: the model call failed: OpenAIAuthenticationError: Error code: 401 - "
            "Incorrect API key provided: ***") in result.stderr
    assert_no_key(result)


def test_the_sync_python_api_answers_every_call_on_an_http_endpoint(tmp_path: Path) -> None:
    # Each solve() used to get a new event loop while the openai client's pool kept the first one's
    # connections: every second call failed with "Event loop is closed".
    from reso.graphs.api import ReSo
    from tests.openai_stub import StubReply

    with OpenAIStub(default=StubReply("So the total is \\boxed{4}.")) as stub:
        reso = ReSo(pool=str(write_pool(tmp_path, stub.base_url)))
        results = [reso.solve("What is 2 + 2?") for _ in range(3)]
    errors = [c.error for result in results for step in result.steps for c in step.candidates if c.error]
    assert errors == []
    assert [result.answer for result in results] == ["4", "4", "4"]
