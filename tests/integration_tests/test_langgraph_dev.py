"""`langgraph dev` serves the exported graph offline on the default pool; the SDK drives a run through it.

The `server` and `server_log` fixtures are in conftest.py."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

QUESTION = ("Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins "
            "for her friends every day with four. She sells the remainder at the farmers' market daily for $2 "
            "per fresh duck egg. How much in dollars does she make every day at the farmers' market?")


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


def test_an_assistant_context_of_settings_reaches_the_run(server: str) -> None:
    from langgraph_sdk import get_client

    async def scenario() -> tuple[dict, dict]:
        client = get_client(url=server)
        assistant = await client.assistants.create("reso", context={"settings": {"plan": {"review": True}}})
        schemas = await client.assistants.get_schemas(assistant["assistant_id"])
        thread = await client.threads.create()
        await client.runs.wait(thread["thread_id"], assistant["assistant_id"], input={"question": QUESTION})
        return schemas, await client.threads.get_state(thread["thread_id"])

    schemas, state = asyncio.run(scenario())
    # Studio's form shows the settings; the team, budgets and learning are for Python callers only.
    assert list(schemas["context_schema"]["properties"]) == ["settings"]
    form = json.dumps(schemas["context_schema"])  # the settings' sections, down to their fields, are in the form
    assert all(f'"{name}"' in form for name in ("plan", "selection", "asking", "reward", "limits", "k_max", "review"))
    assert state["next"] == ["review_plan"], "plan.review in the assistant's settings pauses after planning"
    assert state["values"]["plan"] and "answer" not in state["values"]


def test_a_plan_review_resumes_through_langgraph_dev_without_reviving_a_class(server: str,
                                                                              server_log: Path) -> None:
    from langgraph_sdk import get_client

    async def scenario() -> tuple[dict, dict]:
        client = get_client(url=server)
        assistant = await client.assistants.create("reso", context={"settings": {"plan": {"review": True}}})
        thread = await client.threads.create()
        await client.runs.wait(thread["thread_id"], assistant["assistant_id"], input={"question": QUESTION})
        paused = await client.threads.get_state(thread["thread_id"])
        # What Studio sends when a person keeps the proposed plan: the server reads the paused checkpoint.
        await client.runs.wait(thread["thread_id"], assistant["assistant_id"],
                               command={"resume": {"plan": None}})
        return paused, await client.threads.get_state(thread["thread_id"])

    paused, state = asyncio.run(scenario())
    assert paused["next"] == ["review_plan"]
    assert state["next"] == [] and state["values"]["answer"] == "18" and state["values"]["status"] == "done"
    assert state["values"]["plan"] == paused["values"]["plan"]
    # The server's serializer is LangGraph's default: it would log this (once per type) on reading a class of
    # ours from a checkpoint. The log holds every run of this session's server, this one's resume included.
    log = re.sub(r"\x1b\[[0-9;]*m", "", server_log.read_text(encoding="utf-8"))  # without its colours
    revived = [line for line in log.splitlines()
               if "Deserializing unregistered type" in line or "Blocked deserialization" in line]
    assert revived == []
