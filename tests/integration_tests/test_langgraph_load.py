"""`langgraph dev` under load: 50 runs at once through the SDK, on the default offline pool, loopback only.

Bounded in count (50 runs, each on its own thread) and in time (one overall limit); every run must finish
without an error and with the right answer. The questions are recorded GSM8K questions every replayed model
of the default pool answered right, so the answer does not depend on which agent is selected.
"""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest

from reso.agents.defaults import data_dir, default_pool_path
from reso.agents.pool import load_pool

RUNS = 50
DISTINCT_QUESTIONS = 10
TOTAL_LIMIT_S = 240

pytestmark = pytest.mark.integration


def _questions() -> list[tuple[str, str]]:
    models = {agent.model.model_name for agent in load_pool(default_pool_path()) if agent.kind == "llm"}
    found = []
    with gzip.open(data_dir() / "gsm8k_dev.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            if all(item["correct"].get(model) for model in models):
                found.append((item["question"], str(item["answer"])))
            if len(found) == DISTINCT_QUESTIONS:
                return found
    raise AssertionError("too few recorded questions every model of the default pool answered right")


def test_fifty_concurrent_runs_complete_with_the_right_answers(server: str) -> None:
    from langgraph_sdk import get_client

    questions = _questions()
    jobs = [questions[i % len(questions)] for i in range(RUNS)]

    async def one(client, question: str) -> dict:
        thread = await client.threads.create()
        run = await client.runs.create(thread["thread_id"], "reso", input={"question": question})
        await client.runs.join(thread["thread_id"], run["run_id"])
        finished = await client.runs.get(thread["thread_id"], run["run_id"])
        state = await client.threads.get_state(thread["thread_id"])
        return {"status": finished["status"], "values": state["values"]}

    async def scenario() -> list[dict]:
        client = get_client(url=server, timeout=TOTAL_LIMIT_S)
        return await asyncio.wait_for(asyncio.gather(*(one(client, q) for q, _ in jobs)), TOTAL_LIMIT_S)

    outcomes = asyncio.run(scenario())
    assert len(outcomes) == RUNS
    wrong = []
    for (question, answer), outcome in zip(jobs, outcomes, strict=True):
        values = outcome["values"]
        if outcome["status"] != "success" or values.get("status") != "done" or values.get("answer") != answer:
            wrong.append((question[:40], answer, outcome["status"], values.get("answer"), values.get("notes")))
    assert not wrong, wrong
