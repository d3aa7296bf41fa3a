"""What Studio's thread view shows of a question's own DAG, through `langgraph dev` and the SDK: the subtask
nodes stream from the `execute` subgraph's namespace, and the thread's state holds the plan as Mermaid.

The `server` fixture is in conftest.py. The plan's first two steps are questions the default (replay) pool
has recordings of, so the run is offline and its answer known: 18 × 3 = 54."""

from __future__ import annotations

import asyncio

from tests.integration_tests.test_langgraph_dev import QUESTION

ROBE = "A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total does it take?"
PLAN = [
    {"id": "0", "instruction": QUESTION, "depends_on": []},
    {"id": "1", "instruction": ROBE, "depends_on": []},
    {"id": "final", "instruction": "Please calculate the value of Answer[0]*Answer[1].", "depends_on": ["0", "1"]},
]


def test_studio_streams_the_plans_subtask_nodes_from_the_execute_subgraph(server: str) -> None:
    from langgraph_sdk import get_client

    async def scenario() -> tuple[list[tuple[str, str]], dict, list[dict]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        events: list[tuple[str, str]] = []
        async for part in client.runs.stream(thread["thread_id"], "reso",
                                             input={"question": "Eggs times bolts?", "plan": PLAN},
                                             stream_mode=["updates"], stream_subgraphs=True):
            if part.event.startswith("updates"):
                events.extend((part.event, node) for node in part.data)
        namespaces = {event.split("|", 1)[1] for event, _ in events if "|" in event}
        inner_history = [checkpoint for namespace in namespaces for checkpoint in await client.threads.get_history(
            thread["thread_id"], limit=20, checkpoint={"checkpoint_ns": namespace})]
        return events, await client.threads.get_state(thread["thread_id"]), inner_history

    events, state, inner_history = asyncio.run(scenario())
    assert [node for event, node in events if event == "updates"] == ["plan", "review_plan", "execute", "answer"]
    inner = [(event, node) for event, node in events if event != "updates"]
    assert sorted(node for _, node in inner) == ["step_0", "step_1", "step_final"]
    (event,) = {event for event, _ in inner}
    assert event.startswith("updates|execute:"), event
    # The thread keeps the subgraph's checkpoints in its namespace: the last holds every subtask's record.
    assert inner_history and {c["checkpoint"]["checkpoint_ns"] for c in inner_history} == {event[len("updates|"):]}
    assert sorted(inner_history[0]["values"]["steps"]) == ["0", "1", "final"]

    values = state["values"]
    assert values["answer"] == "54", (values.get("status"), values.get("notes"))
    picture = values["plan_mermaid"].splitlines()
    assert picture[0] == "flowchart TD"
    assert picture[3] == '    step_final["final: Please calculate the value of Answer#91;0#93;*Answer#91;…<br/>' \
                         'tool/calculator → 54"]'
    assert picture[4:] == ["    step_0 --> step_final", "    step_1 --> step_final"]
    assert picture[1].startswith('    step_0["0: Janet’s ducks lay 16 eggs per day.') and picture[1].endswith(' → 18"]')
