"""`langgraph dev` serves the exported graph offline on the default pool; the SDK drives a run through it."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUESTION = ("Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
            "for her friends every day with four. She sells the remainder at the farmers' market daily for $2 "
            "per fresh duck egg. How much in dollars does she make every day at the farmers' market?")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = _free_port()
    cli = Path(sys.executable).with_name("langgraph")
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    process = subprocess.Popen(
        [str(cli), "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload",
         "--config", str(ROOT / "langgraph.json")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"langgraph dev exited early:\n{process.stdout.read()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("langgraph dev did not answer /ok within 180 s")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def test_sdk_runs_a_question_through_langgraph_dev(server: str) -> None:
    from langgraph_sdk import get_client

    async def scenario() -> dict:
        client = get_client(url=server)
        assistants = await client.assistants.search(graph_id="reso")
        assert assistants, "the exported graph 'reso' is not served"
        thread = await client.threads.create()
        await client.runs.wait(thread["thread_id"], "reso", input={"question": QUESTION})
        return await client.threads.get_state(thread["thread_id"])

    state = asyncio.run(scenario())
    values = state["values"]
    errors = [c["error"] for step in values.get("steps", {}).values() for c in step["candidates"]]
    assert values["answer"] == "18", (values.get("status"), values.get("notes"), errors)
    assert values["status"] == "done"
    assert values["plan"][0]["depends_on"] == []
    step = values["steps"][values["plan"][0]["id"]]
    assert step["candidates"], "selection details are in the state Studio shows"
    assert {"agent_id", "score", "selection"} <= set(step["candidates"][0])
