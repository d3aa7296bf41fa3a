"""Compile a TaskDAG into a LangGraph state graph: one node per subtask, edges from its dependencies.

A node with several parents joins them (`add_edge([parents], node)`), so it runs once all have
finished; parallel branches merge their records through the `steps` reducer, never overwriting each
other. Each node carries a RetryPolicy for errors that escape a subtask (candidate failures never do).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy

from reso.graphs.run import current_run


def merge_steps(left: Mapping[str, Any] | None, right: Mapping[str, Any] | None) -> dict[str, Any]:
    """Reducer: subtask records keyed by id; a later record for the same id replaces the earlier one."""
    return {**(left or {}), **(right or {})}


class DagState(TypedDict, total=False):
    """State of one question's DAG run: the subtask records finished so far, by id."""

    steps: Annotated[dict[str, dict[str, Any]], merge_steps]


def node_name(step_id: str) -> str:
    return f"step_{step_id}"


def _transient(error: Exception) -> bool:
    # Retry what may pass on a second try; a bug (TypeError, KeyError…) would fail the same way again.
    return isinstance(error, (TimeoutError, ConnectionError, OSError))


NODE_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.2, retry_on=_transient)


async def _subtask_node(step_id: str, state: DagState) -> dict[str, Any]:
    record = await current_run().result(step_id, state.get("steps") or {})
    return {"steps": {step_id: record}}


def _make_node(step_id: str):
    # A partial, not a closure: LangGraph scans a plain function's bytecode for subgraphs it might call,
    # which is most of the cost of compiling a question's graph; a partial is taken as it is.
    return functools.partial(_subtask_node, step_id)


def compile_dag(dag: Any, *, checkpointer: Any = None) -> CompiledStateGraph:
    """The state graph of `dag` (a reso.graphs.dag.TaskDAG), compiled."""
    builder = StateGraph(DagState)
    for node in dag.nodes:
        builder.add_node(node_name(node.id), _make_node(node.id), retry_policy=NODE_RETRY)
    for node in dag.nodes:
        parents = [node_name(parent) for parent in dag.parents(node.id)]
        if not parents:
            builder.add_edge(START, node_name(node.id))
        elif len(parents) == 1:
            builder.add_edge(parents[0], node_name(node.id))
        else:
            builder.add_edge(parents, node_name(node.id))
    builder.add_edge(node_name(dag.final_id), END)
    return builder.compile(checkpointer=checkpointer, name="task_dag")
