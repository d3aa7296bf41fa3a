"""The top-level ReSo graph: plan the question, optionally pause for the plan to be edited, execute the
task DAG, and read off the answer.

Its runtime context is the run's `RunContext` (`context_schema`): every node reads the settings, team and
budgets from `runtime.context`. `graph` is what `langgraph.json` exports to LangGraph Studio, compiled
without a checkpointer (the server brings its own); a Studio run gives no context or only settings, and
the nodes complete it with the team built for those settings. Python callers pass a context of their own
and, for resumable runs, compile with a checkpointer (see reso.graphs.api).
"""

from __future__ import annotations

import time
from typing import Any

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from reso.graphs.compile import compile_dag
from reso.graphs.context import RunContext
from reso.graphs.dag import PlanError, TaskDAG
from reso.graphs.mermaid import dag_mermaid
from reso.graphs.run import DagRun
from reso.graphs.run_records import RunStatus, StepStatus, Usage, state_steps, step_records
from reso.graphs.state import InputState, OutputState, ReSoState


async def run_context(runtime: Runtime[RunContext]) -> RunContext:
    """The node's run context, with its team: the caller's, or one built from the settings (Studio)."""
    return await (runtime.context or RunContext()).ready()


def state_dag(state: ReSoState) -> TaskDAG:
    """The state's task DAG, validated from the JSON the state keeps."""
    return TaskDAG.model_validate(state["dag"])


def _planned(dag: TaskDAG, notes: list[str], started: float | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"dag": dag.model_dump(mode="json"), "plan": dag.to_steps(),
                              "plan_mermaid": dag_mermaid(dag), "notes": notes}
    return update if started is None else {**update, "started_at": started}


async def plan(state: ReSoState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    started = time.time()
    if state.get("plan"):
        try:
            dag = TaskDAG.from_steps(state["plan"])
        except PlanError as error:
            raise PlanError(f"the given plan is invalid: {error}") from None
        return _planned(dag, dag.repair_notes, started)
    from reso.graphs.planners import make_planner

    run = await run_context(runtime)
    planner = make_planner(run.settings.plan.planner, run.require_team().planner_model)
    report = await planner.aplan_with_report(state["question"])
    notes = [f"planner: {report.planner}", *report.notes, *(f"planner error: {e}" for e in report.errors)]
    return _planned(report.dag, notes, started)


async def review_plan(state: ReSoState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    settings = runtime.context.settings if runtime.context is not None else RunContext().settings
    if not settings.plan.review:
        return {}
    edited = interrupt({"plan": state["plan"],
                        "hint": "resume with {'plan': [...]} to replace the plan, or {'plan': null} to keep it"})
    steps = edited.get("plan") if isinstance(edited, dict) else edited
    if not steps:
        return {}
    return _planned(TaskDAG.from_steps(steps), ["plan edited by a person"])


async def execute(state: ReSoState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    run = await run_context(runtime)
    dag = state_dag(state)
    budget = run.question_budget()
    dag_run = DagRun(run, dag, budget=budget, references=state.get("references") or {},
                     write=runtime.stream_writer, done=step_records(state.get("steps")))
    # This node's config makes the task-DAG graph its subgraph: its nodes (step_<id>) stream under the
    # namespace "execute:<task id>" and it checkpoints there, through the parent's checkpointer.
    steps = await dag_run.execute(compile_dag(dag), get_config())
    notes = [f"budget exceeded: {budget.exceeded}"] if budget.exceeded else []
    return {"steps": state_steps(steps), "plan_mermaid": dag_mermaid(dag, steps), "notes": notes,
            "budget_exceeded": budget.exceeded is not None}


async def answer(state: ReSoState) -> dict[str, Any]:
    dag = state_dag(state)
    steps = step_records(state.get("steps"))
    final = steps.get(dag.final_id)
    if final is not None and final.status == StepStatus.DONE:
        status = RunStatus.DONE
    else:
        status = RunStatus.BUDGET_EXCEEDED if state.get("budget_exceeded") else RunStatus.FAILED
    latency = time.time() - state.get("started_at", time.time())
    usage = Usage.of_steps(steps[step_id] for step_id in dag.ids if step_id in steps)
    return {"answer": final.value if final else None, "answer_text": final.answer if final else "",
            "status": status.value, "usage": usage.to_json(), "latency_s": latency}


def build_graph(*, checkpointer: Any = None) -> CompiledStateGraph[ReSoState, RunContext, InputState, OutputState]:
    """The top-level graph; invoke it with `context=RunContext(...)` (none: the default settings' team)."""
    builder = StateGraph(ReSoState, context_schema=RunContext, input_schema=InputState,
                         output_schema=OutputState)
    builder.add_node("plan", plan)
    builder.add_node("review_plan", review_plan)
    builder.add_node("execute", execute)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "review_plan")
    builder.add_edge("review_plan", "execute")
    builder.add_edge("execute", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="reso")


graph = build_graph()
"""The graph `langgraph.json` exports to LangGraph Studio, which loads a module-level compiled graph: the
one graph compiled at import. It holds no per-run state, so `reso.graphs.api.ReSo` runs on it too when it
has no checkpointer and no plan review."""
