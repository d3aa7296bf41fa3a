"""What a paused run leaves in its checkpoints is plain data, so no checkpointer ever has a class of ours to
revive: a plan review pauses and resumes with no serde event, through the project's checkpoint file and
through a saver with LangGraph's default serializer (the one `langgraph dev` and Studio use).

LangGraph logs "Deserializing unregistered type …" (default serializer) or "Blocked deserialization of …"
(an allowlist, or `LANGGRAPH_STRICT_MSGPACK=true`) only once per type per process, but reports every such
read as a serde event; the tests listen for those events.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Command

from reso.agents.adapters.failures import FailureKind
from reso.graphs.api import ReSo
from reso.graphs.context import RunContext
from reso.graphs.graph import build_graph, state_dag
from reso.graphs.run_records import CandidateRecord, StepRecord, state_steps, step_records
from reso.graphs.settings import ReSoSettings
from reso.graphs.state import ReSoState
from reso.graphs.team import Team
from tests.engine_fakes import ScriptedAnswerer, scripted_team
from tests.unit_tests.test_graph_engine import DIAMOND


@pytest.fixture
def serde_events() -> Iterator[list[SerdeEvent]]:
    events: list[SerdeEvent] = []
    unregister = register_serde_event_listener(events.append)
    yield events
    unregister()


def _team() -> Team:
    """Step A asks a failing agent too, so a candidate record with a `FailureKind` is in the state."""
    answers = {"Step A": "\\boxed{3}", "Step B": "\\boxed{5}", "Step C": "\\boxed{6}"}
    solver = ScriptedAnswerer(answers=answers, calls=[])
    flaky = ScriptedAnswerer(answers={"Step A": "\\boxed{4}"}, failures={"Step A": "connection reset"},
                             calls=[])

    def choose(subtask: str) -> list[str]:
        if subtask.startswith("Please calculate"):
            return ["calc"]
        return ["flaky", "solver"] if subtask.startswith("Step A") else ["solver"]

    return scripted_team({"solver": solver, "flaky": flaky}, choose)


def _assert_step_a_kept_the_failure(steps: dict[str, StepRecord]) -> None:
    failures = [candidate.failure for candidate in steps["a"].candidates]
    assert failures == [FailureKind.ERROR, None] and steps["a"].value == "3"


def test_a_plan_review_pauses_and_resumes_through_the_checkpoint_file_without_a_serde_event(
        tmp_path, serde_events: list[SerdeEvent]) -> None:
    reso = ReSo({"plan.review": True}, team=_team(), checkpoint_path=tmp_path / "runs.sqlite")
    paused = reso.solve("diamond", plan=DIAMOND, thread_id="review")
    assert paused.status == "awaiting_review" and paused.steps == []
    done = reso.resume("review")
    assert (done.status, done.answer) == ("done", "30")
    _assert_step_a_kept_the_failure({step.id: step for step in done.steps})
    # A second instance reads the finished run back from the file alone.
    saved = asyncio.run(ReSo(team=_team(), checkpoint_path=tmp_path / "runs.sqlite").asaved("review"))
    assert saved is not None and saved.ended and saved.result.answer == "30"
    assert serde_events == []


async def test_a_plan_review_resumes_under_langgraphs_default_serializer_without_a_serde_event(
        serde_events: list[SerdeEvent]) -> None:
    # `langgraph dev` compiles the exported graph with a saver of its own, whose serializer is LangGraph's
    # default: it revives any class it finds, with a warning that a later version will refuse to.
    saver = InMemorySaver(serde=JsonPlusSerializer())
    graph = build_graph(checkpointer=saver)
    context = RunContext(team=_team(), settings=ReSoSettings().replace({"plan.review": True}))
    config: dict[str, Any] = {"configurable": {"thread_id": "studio"}}
    await graph.ainvoke({"question": "diamond", "plan": DIAMOND}, config, context=context)
    assert (await graph.aget_state(config)).next == ("review_plan",)
    await graph.ainvoke(Command(resume={"plan": None}), config, context=context)

    values = (await graph.aget_state(config)).values
    assert (values["status"], values["answer"]) == ("done", "30")
    _assert_step_a_kept_the_failure(step_records(values["steps"]))
    assert state_dag(values).ids == ["a", "b", "c", "final"]
    assert serde_events == []
    # Every saved checkpoint, the task-DAG subgraph's included, holds our state as JSON and nothing else
    # (LangGraph's own channels, such as a join's set of finished parents, are its safe types).
    saved = [checkpoint async for checkpoint in saver.alist(None)]
    namespaces = {checkpoint.config["configurable"]["checkpoint_ns"] for checkpoint in saved}
    assert len(namespaces) == 2 and "" in namespaces, namespaces
    checked: set[tuple[str, str]] = set()
    for checkpoint in saved:
        ours = {key: value for key, value in checkpoint.checkpoint["channel_values"].items()
                if key in ReSoState.__annotations__}
        assert json.loads(json.dumps(ours)) == ours
        checked |= {(checkpoint.config["configurable"]["checkpoint_ns"][:7], key) for key in ours}
    assert {("", "dag"), ("", "steps"), ("execute", "steps")} <= checked


def test_a_record_comes_back_from_the_states_json_equal_to_itself() -> None:
    record = StepRecord(id="a", instruction="Step A", depends_on=["b"], status="failed", value=None, candidates=[
        CandidateRecord(agent_id="flaky", model="fake", role="r", failure=FailureKind.TIMEOUT, retries=2,
                        selection={"similarity": 0.5, "bonus": float("inf")}, cost_usd=1e-7),
        CandidateRecord(agent_id="solver", model="fake", role="r", answer="\\boxed{3}", value="3", score=0.25)],
        started_s=1.5, finished_s=2.25, notes=["n"])
    saved = state_steps({"a": record})
    assert json.loads(json.dumps(saved)) == saved and saved["a"]["candidates"][0]["failure"] == "timeout"
    back = step_records(saved)
    assert back == {"a": record} and back["a"].candidates[0].failure is FailureKind.TIMEOUT
