"""`reso eval` end to end through langchain-openai against a local OpenAI-compatible stub server.

The real client path: HTTP to 127.0.0.1, the server's usage figures turned into tokens and USD at the
pool's prices, a 429 (Retry-After: 0) and a 500 retried until the item completes, and the API key sent
to the server but written into no file of the run.
"""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reso.agents.adapters.cache import disable_response_cache
from reso.agents.adapters.prompting import answer_bindings, current_subtask
from reso.evals.cli import app
from tests.openai_stub import OpenAIStub, StubError, StubReply

CANARY = "sk-canary-eval-stub-4b7c9e1f2a3d"
PRICE_IN, PRICE_OUT = 2.0, 8.0  # USD per million tokens
FINAL = "Please calculate the value of Answer[0]*Answer[1]."

# item id -> (sub-question A, its answer, sub-question B, its answer); the stub gets q3's A wrong.
ITEMS = {
    "q1": ("How many legs do 3 chairs with 4 legs each have?", 12, "How many wheels does one tricycle have?", 3),
    "q2": ("How many days are in 2 weeks?", 14, "How many eggs are in half a dozen?", 6),
    "q3": ("How many minutes are in 2 hours?", 120, "How many sides does a pentagon have?", 5),
}
WRONG = {"How many minutes are in 2 hours?": 100}


def _dataset(path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for item_id, (a, a_value, b, b_value) in ITEMS.items():
            plan = [{"id": "0", "instruction": a, "depends_on": []},
                    {"id": "1", "instruction": b, "depends_on": []},
                    {"id": "final", "instruction": FINAL, "depends_on": ["0", "1"]}]
            handle.write(json.dumps({"id": item_id, "question": f"{a} {b} What is their product?",
                                     "answer": a_value * b_value, "plan": plan,
                                     "subtask_answers": {"0": a_value, "1": b_value,
                                                         "final": a_value * b_value}}) + "\n")
    return path


def _pool(path: Path, base_url: str) -> Path:
    path.write_text(f"""\
name: stub-endpoint
agents:
  - id: stub/solver
    model:
      spec: "openai:stub-model"
      base_url: "{base_url}"
      api_key_env: STUB_EVAL_KEY
      price_in: {PRICE_IN}
      price_out: {PRICE_OUT}
    role: Arithmetic Word Problems
    profile: Solves short arithmetic word problems and calculations step by step.
  - id: tool/calculator
    model: {{spec: "tool:calculator"}}
    role: Exact arithmetic
    profile: >-
      Evaluates arithmetic expressions exactly, such as products of earlier answers
      ("calculate Answer[0]*Answer[1]"); declines anything that is not a plain calculation.
    domain: integration
""", encoding="utf-8")
    return path


class ScriptedModel:
    """The stub's answers: each sub-question's value (one wrong), and the product of the bound answers
    for the integration step. Records every reply it serves, so the test knows the billed usage."""

    def __init__(self) -> None:
        self.answers = {a: a_value for a, a_value, _, _ in ITEMS.values()}
        self.answers |= {b: b_value for _, _, b, b_value in ITEMS.values()}
        self.answers |= WRONG
        self.served: list[StubReply] = []
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> StubReply | StubError:
        prompt = body["messages"][-1]["content"]
        subtask = current_subtask(prompt)
        if subtask == FINAL:
            value = math.prod(float(v) for v in answer_bindings(prompt).values())
            text = f"Multiplying the earlier answers gives \\boxed{{{value:g}}}."
        elif subtask in self.answers:
            text = f"Counting carefully, the answer is \\boxed{{{self.answers[subtask]}}}."
        else:
            return StubError(400, f"unscripted subtask {subtask[:40]!r}")
        # Usage differs per reply so that a lost or double-counted call shows in the totals.
        reply = StubReply(text, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4)
        with self._lock:
            self.served.append(reply)
        return reply


@pytest.fixture
def canary_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_EVAL_KEY", CANARY)
    yield
    disable_response_cache()


def test_reso_eval_through_langchain_openai(tmp_path: Path, canary_key: None) -> None:
    model = ScriptedModel()
    out = tmp_path / "runs" / "stub-reso"
    script = [StubError(429, "slow down", retry_after_s=0), StubError(500, "upstream exploded")]
    with OpenAIStub(script, default=model) as stub:
        dataset = _dataset(tmp_path / "items.jsonl")
        pool = _pool(tmp_path / "pool.yaml", stub.base_url)
        result = CliRunner().invoke(app, ["eval", "--dataset", str(dataset), "--pool", str(pool), "--out", str(out),
                                          "--method", "reso", "--limit", "3", "--concurrency", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]

    assert summary["n"] == 3 and summary["failed_items"] == 0
    assert {row["id"]: row["correct"] for row in rows} == {"q1": True, "q2": True, "q3": False}
    assert summary["accuracy"] == pytest.approx(2 / 3)
    # Every sub-question went to the endpoint; the exact tool took the integration steps.
    for row in rows:
        agents = {step["id"]: step["agent"] for step in row["steps"]}
        assert agents["0"] == agents["1"] == "stub/solver", agents

    # Usage is what the server reported, priced at the pool's prices; errors are not billed.
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in model.served)
    cost = sum(r.prompt_tokens * PRICE_IN + r.completion_tokens * PRICE_OUT for r in model.served) / 1e6
    assert summary["total_tokens"] == tokens
    assert summary["cost_usd"] == pytest.approx(cost, rel=1e-9)

    # The 429 and the 500 were each retried: their request bodies were sent again and then answered.
    requests = stub.chat_requests
    assert len(requests) == len(model.served) + 2
    for failed in requests[:2]:
        assert any(later.body == failed.body for later in requests[2:]), "an errored request was not retried"
    assert sum(c["retries"] for row in rows for step in row["steps"] for c in step["candidates"]) == 2
    assert all(request.headers["authorization"] == f"Bearer {CANARY}" for request in requests)

    # The key reached the server and nothing else: no file of the run (its response cache included) holds it.
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert (out / "responses.sqlite") in files  # the run's own cache, inside its --out
    leaks = [str(path) for path in files if CANARY.encode() in path.read_bytes()]
    assert leaks == []
