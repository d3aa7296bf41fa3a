"""The top-level ReSo graph: plan the question, optionally pause for the plan to be edited, execute the
task DAG, and read off the answer. `graph` is what `langgraph.json` exports to LangGraph Studio; it is
compiled without a checkpointer (the server brings its own). Python callers use `build_graph` with a
team and a checkpointer of their own (see reso.graphs.api).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from reso.graphs.budget import Budget, current_run_budget
from reso.graphs.compile import compile_dag
from reso.graphs.dag import PlanError, TaskDAG
from reso.graphs.records import Result
from reso.graphs.run import DagRun
from reso.graphs.settings import ReSoSettings
from reso.graphs.state import InputState, OutputState, ReSoState
from reso.graphs.team import Team, team_for


class ReSoGraph:
    """The nodes of the top-level graph, bound to a team (or to the per-settings cached team)."""

    def __init__(self, team: Team | None = None) -> None:
        self._team = team

    async def team(self, settings: ReSoSettings) -> Team:
        # Building a team reads files and opens the DADB: off the event loop (the server forbids blocking).
        return self._team if self._team is not None else await asyncio.to_thread(team_for, settings)

    async def plan(self, state: ReSoState, runtime: Runtime[ReSoSettings]) -> dict[str, Any]:
        settings = ReSoSettings.coerce(runtime.context)
        started = time.time()
        if state.get("plan"):
            try:
                dag = TaskDAG.from_steps(state["plan"])
            except PlanError as error:
                raise PlanError(f"the given plan is invalid: {error}") from None
            return {"plan": dag.to_steps(), "started_at": started, "notes": list(dag.repair_notes)}
        from reso.graphs.planners import make_planner

        planner = make_planner(settings.planner, (await self.team(settings)).planner_model)
        report = await planner.aplan_with_report(state["question"])
        notes = [f"planner: {report.planner}", *report.notes, *(f"planner error: {e}" for e in report.errors)]
        return {"plan": report.dag.to_steps(), "started_at": started, "notes": notes}

    async def review_plan(self, state: ReSoState, runtime: Runtime[ReSoSettings]) -> dict[str, Any]:
        settings = ReSoSettings.coerce(runtime.context)
        if not settings.review_plan:
            return {}
        edited = interrupt({"plan": state["plan"],
                            "hint": "resume with {'plan': [...]} to replace the plan, or {'plan': null} to keep it"})
        steps = edited.get("plan") if isinstance(edited, dict) else edited
        if not steps:
            return {}
        return {"plan": TaskDAG.from_steps(steps).to_steps(), "notes": ["plan edited by a person"]}

    async def execute(self, state: ReSoState, runtime: Runtime[ReSoSettings],
                      config: RunnableConfig) -> dict[str, Any]:
        settings = ReSoSettings.coerce(runtime.context)
        dag = TaskDAG.from_steps(state["plan"])
        budget = Budget(max_tokens=settings.max_tokens, max_usd=settings.max_usd,
                        max_seconds=settings.max_seconds, parent=current_run_budget())
        run = DagRun(dag, await self.team(settings), settings, budget=budget,
                     references=state.get("references"), write=get_stream_writer(),
                     done=state.get("steps"))
        steps = await run.execute(compile_dag(dag), config)
        notes = [f"budget exceeded: {budget.exceeded}"] if budget.exceeded else []
        return {"steps": steps, "notes": notes}

    async def answer(self, state: ReSoState) -> dict[str, Any]:
        dag = TaskDAG.from_steps(state["plan"])
        final = (state.get("steps") or {}).get(dag.final_id, {})
        budget_hit = any(note.startswith("budget exceeded") for note in state.get("notes") or [])
        status = "done" if final.get("status") == "done" else ("budget_exceeded" if budget_hit else "failed")
        latency = time.time() - state.get("started_at", time.time())
        partial = {**state, "answer": final.get("value"), "latency_s": latency, "status": status}
        usage = Result.from_state(partial).usage.to_json()
        return {"answer": final.get("value"), "answer_text": final.get("answer", ""), "status": status,
                "usage": usage, "latency_s": latency}


def build_graph(team: Team | None = None, *, checkpointer: Any = None) -> CompiledStateGraph:
    """The top-level graph; `team=None` builds (and caches) a team from each run's settings."""
    nodes = ReSoGraph(team)
    builder = StateGraph(ReSoState, context_schema=ReSoSettings, input_schema=InputState,
                         output_schema=OutputState)
    builder.add_node("plan", nodes.plan)
    builder.add_node("review_plan", nodes.review_plan)
    builder.add_node("execute", nodes.execute)
    builder.add_node("answer", nodes.answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "review_plan")
    builder.add_edge("review_plan", "execute")
    builder.add_edge("execute", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="reso")


graph = build_graph()
