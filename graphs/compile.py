"""Compile a TaskDAG into a LangGraph state graph: one node per subtask, edges from its dependencies.

A node with several parents joins them (`add_edge([parents], node)`), so it runs once all have
finished; parallel branches merge their records (as JSON) through the `steps` reducer of `DagState`
(`reso.graphs.state`), never overwriting each other. Each node carries a RetryPolicy for errors that escape a subtask
(candidate failures never do).

The graph's runtime context is the question's `DagRun` (`context_schema`): a node holds only its step id
and asks `runtime.context` for the step's record, so one compiled graph serves every DAG of its shape.
"""

from __future__ import annotations

import functools
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy

from reso.graphs.dag import TaskDAG
from reso.graphs.run import DagRun
from reso.graphs.run_records import state_steps
from reso.graphs.state import DagState


def node_name(step_id: str) -> str:
    return f"step_{step_id}"


def _transient(error: Exception) -> bool:
    # Retry what may pass on a second try; a bug (TypeError, KeyError…) would fail the same way again.
    return isinstance(error, (TimeoutError, ConnectionError, OSError))


NODE_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.2, retry_on=_transient)


async def _subtask_node(step_id: str, state: DagState, runtime: Runtime[DagRun]) -> dict[str, Any]:
    record = await runtime.context.result(step_id, state.get("steps") or {})
    return {"steps": state_steps({step_id: record})}


def _make_node(step_id: str):
    # A partial, not a closure: LangGraph scans a plain function's bytecode for subgraphs it might call,
    # which is most of the cost of compiling a question's graph; a partial is taken as it is.
    return functools.partial(_subtask_node, step_id)


DagShape = tuple[tuple[str, tuple[str, ...]], ...]
TaskDagGraph = CompiledStateGraph[DagState, DagRun, DagState, DagState]


def dag_shape(dag: TaskDAG) -> DagShape:
    """What a compiled graph depends on: the subtask ids and their parents, in order (not the texts)."""
    return tuple((node.id, tuple(dag.parents(node.id))) for node in dag.nodes)


def compile_dag(dag: TaskDAG, *, checkpointer: Any = None) -> TaskDagGraph:
    """The state graph of `dag`, compiled; invoke it with the question's `DagRun` as `context`.

    Without a checkpointer the graph is shared by every DAG of the same shape: its nodes hold only step ids
    and find the live run in their runtime context, so nothing in it belongs to one question.
    """
    if checkpointer is None:
        return _compiled_for_shape(dag_shape(dag))
    return _compile(dag_shape(dag), checkpointer)


@functools.lru_cache(maxsize=256)
def _compiled_for_shape(shape: DagShape) -> TaskDagGraph:
    return _compile(shape, None)


def _compile(shape: DagShape, checkpointer: Any) -> TaskDagGraph:
    builder = StateGraph(DagState, context_schema=DagRun)
    for step_id, _ in shape:
        builder.add_node(node_name(step_id), _make_node(step_id), retry_policy=NODE_RETRY)
    children = {parent for _, parents in shape for parent in parents}
    for step_id, parents in shape:
        names = [node_name(parent) for parent in parents]
        if not names:
            builder.add_edge(START, node_name(step_id))
        elif len(names) == 1:
            builder.add_edge(names[0], node_name(step_id))
        else:
            builder.add_edge(names, node_name(step_id))
    (final_id,) = [step_id for step_id, _ in shape if step_id not in children]
    builder.add_edge(node_name(final_id), END)
    return builder.compile(checkpointer=checkpointer, name="task_dag")
