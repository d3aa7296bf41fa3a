"""`reso solve --checkpoint postgresql://…` killed mid-question, then resumed by `--thread` from the server.

The command line's mirror of test_postgres_checkpoint.py: a three-step chain (A, then B, then C, then the
calculator's product) answered by a local OpenAI-compatible stub, where step C is slow. The first run is
killed while C is in flight; the rerun names only the thread (no question) and the server by the other URL
scheme, as another machine might: it answers, and the stub sees A and B once and C twice. The checkpoint
server's role has a password, which neither run prints.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from reso.agents.adapters.prompting import current_subtask
from tests.integration_tests.test_crash_resume import RESO, ROOT, _env
from tests.openai_stub import OpenAIStub, StubError, StubReply

pytestmark = pytest.mark.integration

QUESTION = """The following is a complex question composed of multiple sub-questions:
Step A: how many apples are in the basket? The answer is recorded as Answer[0].
Step B: how many boxes hold Answer[0] apples each? The answer is recorded as Answer[1].
Step C: how many crates hold Answer[1] boxes each? The answer is recorded as Answer[2].
Please use the answers to the above questions to perform the following calculations:
Please calculate the value of Answer[0]*Answer[1]*Answer[2]."""
ANSWERS = {"Step A": 2, "Step B": 3, "Step C": 4}
DELAYS = {"Step A": 0.2, "Step B": 0.2, "Step C": 4.0}
THREAD = "cli-crash-test"
KEY_ENV, KEY = "STUB_SOLVE_KEY", "sk-stub-solve-checkpoint"


def _step(body: Any) -> str | None:
    subtask = current_subtask(body["messages"][-1]["content"])  # the prompt also quotes the whole question
    return next((step for step in ANSWERS if step in subtask), None)


def _answer(body: Any) -> StubReply | StubError:
    step = _step(body)
    if step is None:
        return StubError(400, "unscripted subtask")
    return StubReply(f"So the answer is \\boxed{{{ANSWERS[step]}}}.", delay_s=DELAYS[step])


def _asked(stub: OpenAIStub) -> list[str | None]:
    return [_step(request.body) for request in stub.chat_requests]


def _pool(path: Path, base_url: str) -> Path:
    path.write_text(f"""\
name: stub-solve
agents:
  - id: stub/solver
    model:
      spec: "openai:stub-model"
      base_url: "{base_url}"
      api_key_env: {KEY_ENV}
      price_in: 1.0
      price_out: 2.0
    role: Arithmetic Word Problems
    profile: Counts things in short word problems.
  - id: tool/calculator
    model: {{spec: "tool:calculator"}}
    role: Exact arithmetic
    profile: Evaluates arithmetic expressions exactly, such as products of earlier answers.
""", encoding="utf-8")
    return path


def _solve(pool: Path, checkpoint: str, *question: str) -> list[str]:
    return [RESO, "solve", *question, "--pool", str(pool), "--set", "asking.k=1", "--checkpoint", checkpoint,
            "--thread", THREAD, "--json"]


def test_reso_solve_killed_mid_question_resumes_from_the_postgres_checkpoint(tmp_path, postgres_server):
    role, password = "reso_solve", "pw-canary-solve-7e6d5c4b"
    postgres_server.admin(f"DROP ROLE IF EXISTS {role}", f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    url = postgres_server.url(postgres_server.create_database(owner=role), user=role, password=password)
    env = {**_env(), KEY_ENV: KEY}
    with OpenAIStub(default=_answer) as stub:
        pool = _pool(tmp_path / "pool.yaml", stub.base_url)
        first = subprocess.Popen(_solve(pool, url, QUESTION), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        try:
            while "Step C" not in _asked(stub):
                if first.poll() is not None:
                    pytest.fail(f"reso solve ended before step C: {first.stderr.read().decode()[-2000:]}")
                assert time.monotonic() < deadline, "step C was never asked"
                time.sleep(0.02)
            time.sleep(1.0)  # C answers after 4 s: kill it in flight, well after A and B were saved
        finally:
            first.send_signal(signal.SIGKILL)
            _, first_err = first.communicate()
        assert _asked(stub) == ["Step A", "Step B", "Step C"]

        elsewhere = url.replace("postgresql://", "postgres://", 1)
        resumed = subprocess.run(_solve(pool, elsewhere), cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=90)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        result = json.loads(resumed.stdout.strip().splitlines()[-1])
        assert result["answer"] == "24" and result["status"] == "done" and result["thread_id"] == THREAD
        assert result["question"] == QUESTION
        assert {step["id"]: step["value"] for step in result["steps"]} == {"0": "2", "1": "3", "2": "4",
                                                                          "final": "24"}
        assert _asked(stub) == ["Step A", "Step B", "Step C", "Step C"], "only the step in flight is asked again"

        # Answered: the same command again gives the saved result and asks nobody.
        again = subprocess.run(_solve(pool, url, QUESTION), cwd=ROOT, env=env, capture_output=True, text=True,
                               timeout=90)
        assert again.returncode == 0, again.stderr[-2000:]
        assert json.loads(again.stdout.strip().splitlines()[-1])["answer"] == "24"
        assert len(stub.chat_requests) == 4
    printed = first_err.decode() + resumed.stdout + resumed.stderr + again.stdout + again.stderr
    assert password not in printed
