"""A canary API key must never leave the environment variable that holds it.

A full `reso eval` (training mode, response cache on, so every kind of output file is written) runs against
a local OpenAI-compatible stub with a canary key in the variable the pool names. Some calls fail with an
error body that echoes the key, as careless providers do. Then every file written under the run's folder
(results, summary, reports, CRM records, the DADB and its FAISS index, the response cache, plots, SQLite
side files) and anything beside it, the
process's standard output and error with every library's DEBUG logging on, and the pool file are scanned
for the key. The Python API with a SQLite checkpoint is scanned the same way, with its log records.
A PostgreSQL DADB URL's password (`--db`, `RESO_DB_URL`) is held to the same standard, a wrong one included.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reso.evals.portable import portable_command
from tests.openai_stub import OpenAIStub, StubError, StubReply

CANARY = "sk-canary-9f8e7d6c5b4a"
KEY_VAR = "RESO_CANARY_TEST_KEY"
REPO = Path(__file__).resolve().parents[2]
# The key, and its tail alone (in case a redactor dropped only the "sk-" shape), in the encodings a file
# or a log may hold it in.
NEEDLES = [CANARY.encode(), CANARY.removeprefix("sk-").encode(), CANARY.encode("utf-16-le")]

POOL = """\
name: canary
models:
  - spec: openai:stub-model-a
    name: stub-a
    base_url: {url}
    api_key_env: {var}
    price_in: 1.0
    price_out: 2.0
    params: {{max_retries: 0, timeout: 10}}
  - spec: openai:stub-model-b
    name: stub-b
    base_url: {url}
    api_key_env: {var}
    price_in: 3.0
    price_out: 4.0
    params: {{max_retries: 0, timeout: 10}}
roles: [Algebra, Arithmetic Word Problems]
"""

QUESTIONS = [
    {"id": "q1", "question": "Tom has 2 apples and buys 2 more. How many apples does he have?", "answer": "4",
     "plan": [{"id": "1", "instruction": "Add 2 and 2.", "depends_on": []},
              {"id": "final", "instruction": "Give Answer[1] as the number of apples.", "depends_on": ["1"]}]},
    {"id": "q2", "question": "A box holds 3 rows of 5 eggs. How many eggs?", "answer": "15",
     "plan": [{"id": "1", "instruction": "Multiply 3 by 5.", "depends_on": []},
              {"id": "final", "instruction": "Give Answer[1] as the number of eggs.", "depends_on": ["1"]}]},
    {"id": "q3", "question": "What is 10 minus 6?", "answer": "4"},
]

# Failures whose bodies echo the key: a server error and a rejected key.
ECHOES = [StubError(500, f"internal error while checking key {CANARY}"),
          StubError(401, f"Incorrect API key provided: {CANARY}. You can find your API key at ...")]


def _reply(body: object) -> StubReply:
    """Answer with the number the last user message asks for (the stub's default for unscripted calls)."""
    text = json.dumps(body)
    value = "15" if ("3 by 5" in text or "eggs" in text) else "4"
    return StubReply(f"Working it out step by step.\nThe answer is \\boxed{{{value}}}.", prompt_tokens=30,
                     completion_tokens=12)


def leaks(data: bytes) -> list[bytes]:
    return [needle for needle in NEEDLES if needle in data]


def scan_tree(root: Path) -> dict[str, list[bytes]]:
    """Every regular file under root that holds the key, with what was found."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and (hits := leaks(path.read_bytes())):
            found[str(path.relative_to(root))] = hits
    return found


@pytest.fixture
def canary_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_VAR, CANARY)
    return KEY_VAR


def _write_inputs(folder: Path, stub: OpenAIStub) -> tuple[Path, Path]:
    pool = folder / "pool.yaml"
    pool.write_text(POOL.format(url=stub.base_url, var=KEY_VAR), encoding="utf-8")
    dataset = folder / "questions.jsonl"
    dataset.write_text("".join(json.dumps(item) + "\n" for item in QUESTIONS), encoding="utf-8")
    return pool, dataset


def test_full_eval_writes_the_key_nowhere(tmp_path: Path, canary_env: str) -> None:
    sweep = tmp_path / "sweep"
    out = sweep / "run"
    with OpenAIStub(ECHOES, default=_reply) as stub:
        pool, dataset = _write_inputs(tmp_path, stub)
        argv = ["reso", "eval", "--dataset", str(dataset), "--method", "reso", "--mode", "train",
                "--pool", str(pool), "--out", str(out), "--set", "asking.k=2", "--concurrency", "2",
                "--quiet"]
        # The CLI as installed, with every library logging at DEBUG onto stderr (httpx, openai, langchain).
        program = ("import logging, sys; logging.basicConfig(level=logging.DEBUG, stream=sys.stderr); "
                   "from reso.evals.cli import app; sys.argv = " + repr(argv) + "; app()")
        env = {**os.environ, KEY_VAR: CANARY, "PYTHONUNBUFFERED": "1"}
        done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True,
                              timeout=300)
        chat_requests = stub.chat_requests
    stdout, stderr = done.stdout, done.stderr
    assert done.returncode == 0, stderr.decode(errors="replace")[-3000:]

    # The run really used the key, met the echoing failures, and wrote every kind of output.
    assert len(chat_requests) >= len(QUESTIONS) + len(ECHOES)
    assert all(request.headers.get("authorization") == f"Bearer {CANARY}" for request in chat_requests)
    written = {path.name for path in out.rglob("*") if path.is_file()}
    assert {"results.jsonl", "summary.json", "report.md", "crm_records.jsonl", "dadb.sqlite"} <= written, written
    assert any(path.suffix == ".png" for path in out.rglob("*")), "no plot was written"
    cache = out / "responses.sqlite"  # the response cache, inside the run's own folder
    assert cache.is_file() and cache.stat().st_size > 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(row["id"] for row in rows) == ["q1", "q2", "q3"]
    errors = [c["error"] for row in rows for step in row["steps"] for c in step["candidates"] if c["error"]]
    # The 500 is retried (a transient failure, its text only in logs); the 401 is final and recorded.
    assert any("Error code: 401" in error and "***" in error for error in errors), errors
    assert b"DEBUG" in stderr, "DEBUG logging was not on: the log scan would be vacuous"

    assert scan_tree(tmp_path) == {}
    assert leaks(stdout) == [] and leaks(stderr) == []
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # The command line is recorded (its paths relative to the run folder), and it holds no key.
    assert summary["command"] == portable_command(argv, out)


async def test_python_api_with_a_checkpoint_writes_the_key_nowhere(tmp_path: Path, canary_env: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    from reso.graphs.api import ReSo

    caplog.set_level(logging.DEBUG)
    checkpoint = tmp_path / "checkpoints.sqlite"
    with OpenAIStub(ECHOES, default=_reply) as stub:
        pool, _ = _write_inputs(tmp_path, stub)
        reso = ReSo({"asking.k": 2}, pool=str(pool), db=str(tmp_path / "dadb.sqlite"), mode="train", checkpoint_path=checkpoint)
        result = await reso.asolve(QUESTIONS[0]["question"], plan=QUESTIONS[0]["plan"], thread_id="canary")
        chat_requests = stub.chat_requests
    assert len(chat_requests) >= 3 and chat_requests[0].headers["authorization"] == f"Bearer {CANARY}"
    errors = [c.error for step in result.steps for c in step.candidates if c.error]
    assert errors and all(CANARY not in error for error in errors)
    assert result.answer == "4"
    assert checkpoint.is_file()

    assert scan_tree(tmp_path) == {}
    assert leaks(json.dumps(result.to_json()).encode()) == []
    assert leaks(result.model_dump_json().encode()) == []
    logged = "\n".join(f"{record.name} {record.getMessage()} {record.args!r} {record.exc_text or ''}"
                       for record in caplog.records)
    assert caplog.records, "no log record was captured: the log scan would be vacuous"
    assert leaks(logged.encode()) == []


def test_no_command_line_option_takes_a_key() -> None:
    """Keys come only from environment variables, so the command line that summary.json records holds none."""
    import re

    import typer

    from reso.evals.cli import app

    key_like = re.compile(r"(?i)api[-_]?key|secret|password|credential|(^|[-_])token$")

    def options(command: Any, path: str) -> list[tuple[str, str]]:
        found = [(path, name) for param in command.params for name in getattr(param, "opts", [])]
        for name, child in getattr(command, "commands", {}).items():  # typer bundles its own click
            found += options(child, f"{path} {name}")
        return found

    every = options(typer.main.get_command(app), "reso")
    assert len(every) > 50  # the walk reached the sub-commands
    assert [(path, name) for path, name in every if key_like.search(name.lstrip("-"))] == []


DB_CANARY = "pg-canary-7b3e5d1f"


def _reso_eval_with_debug_logging(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    program = ("import logging, sys; logging.basicConfig(level=logging.DEBUG, stream=sys.stderr); "
               "from reso.evals.cli import app; sys.argv = " + repr(argv) + "; app()")
    return subprocess.run([sys.executable, "-c", program], cwd=cwd, env=env, capture_output=True, timeout=300)


def test_a_database_url_password_is_written_nowhere(tmp_path: Path, postgres_server: Any) -> None:
    """`reso eval --db postgresql://USER:PASSWORD@…` (and `RESO_DB_URL`): the password opens the DADB and
    appears in no file, no log line, no summary and no error."""
    from reso.agents.dadb.open import open_dadb

    needles = [DB_CANARY.encode(), DB_CANARY.encode("utf-16-le")]
    role = "canary_db_user"
    postgres_server.admin(f"DROP ROLE IF EXISTS {role}", f"CREATE ROLE {role} LOGIN PASSWORD '{DB_CANARY}'")
    url = postgres_server.url(postgres_server.create_database(owner=role), user=role, password=DB_CANARY)
    out = tmp_path / "sweep" / "run"
    argv = ["reso", "eval", "--dataset", "gsm8k-mas-easy-train", "--limit", "3", "--mode", "train", "--out",
            str(out), "--db", url, "--set", "selection.embedder=hash:256", "--concurrency", "2", "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = _reso_eval_with_debug_logging(argv, tmp_path, env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert b"DEBUG" in done.stderr, "DEBUG logging was not on: the log scan would be vacuous"
    # The server asks this role for its password, so a DADB that learned proves the password was used.
    assert open_dadb(url, mode="test").total_visits() > 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["db"] == url.replace(DB_CANARY, "***")
    assert url.replace(DB_CANARY, "***") in summary["command"]

    # A wrong password, through the environment variable: one line, exit 2, no password either.
    wrong = url.replace(DB_CANARY, DB_CANARY + "-wrong")
    argv_env = [arg for arg in argv if arg not in ("--db", url)]
    argv_env[argv_env.index(str(out))] = str(tmp_path / "sweep" / "wrong")
    refused = _reso_eval_with_debug_logging(argv_env, tmp_path, {**env, "RESO_DB_URL": wrong})
    assert refused.returncode == 2, refused.stderr.decode(errors="replace")[-3000:]
    error_lines = [line for line in refused.stderr.decode().splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and "password authentication failed" in error_lines[0], error_lines

    found = {}
    for path in sorted(tmp_path.rglob("*")):
        if path.is_file() and (hits := [n for n in needles if n in path.read_bytes()]):
            found[str(path.relative_to(tmp_path))] = hits
    assert found == {}
    for stream in (done.stdout, done.stderr, refused.stdout, refused.stderr):
        assert [n for n in needles if n in stream] == []
