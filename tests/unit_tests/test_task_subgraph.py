"""The question's task-DAG graph runs as a subgraph of `execute`, as Studio's thread view shows it: its
nodes stream under the `execute:<task id>` namespace, it checkpoints there, and the state draws the plan."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from reso.graphs.context import RunContext
from reso.graphs.graph import build_graph
from reso.graphs.settings import ReSoSettings
from reso.graphs.state import state_serializer
from tests.unit_tests.test_graph_engine import DIAMOND, _team


async def test_subtask_nodes_stream_and_checkpoint_in_the_execute_subgraph_namespace() -> None:
    team, _ = _team()
    saver = InMemorySaver(serde=state_serializer())
    graph = build_graph(checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": "studio"}}
    events: list[tuple[tuple[str, ...], str]] = []
    async for namespace, update in graph.astream({"question": "diamond", "plan": DIAMOND}, config,
                                                 context=RunContext(team=team), stream_mode="updates",
                                                 subgraphs=True):
        events.extend((namespace, node) for node in update)

    assert [node for namespace, node in events if not namespace] == ["plan", "review_plan", "execute", "answer"]
    inner = [(namespace, node) for namespace, node in events if namespace]
    assert sorted(node for _, node in inner) == ["step_a", "step_b", "step_c", "step_final"]
    (namespace,) = {namespace for namespace, _ in inner}
    assert len(namespace) == 1 and namespace[0].startswith("execute:")
    # Each subtask node's update arrives before `execute` finishes (streamed as the subtask finishes).
    assert events.index(((), "execute")) > max(events.index(event) for event in inner)

    saved = [checkpoint async for checkpoint in saver.alist(
        {"configurable": {"thread_id": "studio", "checkpoint_ns": namespace[0]}})]
    assert saved, "the subgraph checkpoints in its own namespace"
    assert sorted(saved[0].checkpoint["channel_values"]["steps"]) == ["a", "b", "c", "final"]

    values = (await graph.aget_state(config)).values
    assert values["answer"] == "30"
    assert values["plan_mermaid"].splitlines()[1:] == [
        '    step_a["a: Step A: how many apples?<br/>solver → 3"]',
        '    step_b["b: Step B: how many bananas?<br/>solver → 5"]',
        '    step_c["c: Step C: double Answer#91;a#93;.<br/>solver → 6"]',
        '    step_final["final: Please calculate the value of Answer#91;b#93;*Answer#91;…<br/>calc → 30"]',
        "    step_a --> step_c",
        "    step_b --> step_final",
        "    step_c --> step_final",
    ]


async def test_the_planned_picture_is_in_the_state_before_the_plan_runs() -> None:
    team, _ = _team()
    graph = build_graph(checkpointer=InMemorySaver(serde=state_serializer()))
    config: dict[str, Any] = {"configurable": {"thread_id": "review"}}
    context = RunContext(team=team, settings=ReSoSettings().replace({"plan.review": True}))
    await graph.ainvoke({"question": "diamond", "plan": DIAMOND}, config, context=context)
    snapshot = await graph.aget_state(config)
    assert snapshot.next == ("review_plan",)
    picture = snapshot.values["plan_mermaid"]
    assert '    step_a["a: Step A: how many apples?"]' in picture.splitlines()
    assert "<br/>" not in picture, "no outcome before the subtasks run"
