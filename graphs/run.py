"""The execution of one question's DAG: which earlier answers each subtask sees, and when it may start.

A `DagRun` is made from the run's context for one question (with the question's budget, references and
progress writer) and is the runtime context of the question's compiled task-DAG graph
(`reso.graphs.compile`): each node asks it for its step's record.

In eager mode a subtask starts the moment the subtasks it waits for have finished, in background tasks
owned by this run, so a question's wall time follows its critical path. LangGraph's nodes then only
collect finished records into state: a superstep still waits for its slowest node, but the work of a
fast branch's successor has already begun. In waves mode each node does its own work when LangGraph
schedules it (the plain superstep behaviour, kept for comparison).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any

from reso.graphs.budget import Budget
from reso.graphs.context import RunContext
from reso.graphs.dag import StepRole, TaskDAG
from reso.graphs.plan_settings import ContextPolicy, Schedule
from reso.graphs.run_records import StepJSON, StepRecord, state_steps, step_records
from reso.graphs.subtask import ProgressWriter, Subtask, context_for
from reso.reward.answers import answers_match


@dataclass(eq=False)
class DagRun:
    """Runs the subtasks of one question for the graph nodes that ask for them: the run's context, the
    question's DAG and budget, its references (training), its progress writer, and the records so far
    (`done`: those a resumed run had already saved)."""

    run: RunContext
    dag: TaskDAG
    budget: Budget = field(kw_only=True)
    references: Mapping[str, str] = field(default_factory=dict, kw_only=True)
    write: ProgressWriter | None = field(default=None, kw_only=True)
    done: InitVar[Mapping[str, StepRecord] | None] = field(default=None, kw_only=True)
    results: dict[str, StepRecord] = field(init=False, default_factory=dict)
    origin: float = field(init=False, default_factory=time.monotonic)

    def __post_init__(self, done: Mapping[str, StepRecord] | None) -> None:
        self.results.update(done or {})
        self._tasks: dict[str, asyncio.Task[StepRecord]] = {}
        self._futures: dict[str, asyncio.Future[StepRecord]] = {}
        self._order = self.dag.topological_order()

    def visible(self, step_id: str) -> list[str]:
        """The earlier subtasks whose answers `step_id` is shown, by the context policy."""
        match self.run.settings.plan.context:
            case ContextPolicy.PARENTS:
                return list(self.dag.parents(step_id))
            case ContextPolicy.ANCESTORS:
                return list(self.dag.ancestors(step_id))
            case ContextPolicy.ALL:
                return self._order[: self._order.index(step_id)]

    def waits_for(self, step_id: str) -> list[str]:
        # Ancestors are finished once the parents are; "all" must wait for every earlier subtask.
        if self.run.settings.plan.context == ContextPolicy.ALL:
            return self.visible(step_id)
        return list(self.dag.parents(step_id))

    def sound_context(self, step_id: str, steps: Mapping[str, StepRecord]) -> bool:
        """Whether every parent with a known reference was answered right (exactly): only then does the
        step's own reference apply to the question its agents were really asked."""
        for parent in self.dag.parents(step_id):
            reference = self.references.get(parent)
            if reference is None:
                continue
            value = steps[parent].value if parent in steps else None
            if value is None or not answers_match(str(value), reference, rel_tol=1e-6):
                return False
        return True

    def subtask(self, step_id: str, steps: Mapping[str, StepRecord]) -> Subtask:
        """`step_id` as this run hands it over, once the subtasks it waits for have their `steps` records."""
        node = self.dag.node(step_id)
        return Subtask(id=step_id, instruction=node.instruction, depends_on=node.depends_on,
                       context=context_for(self.visible(step_id), steps), reference=self.references.get(step_id),
                       credit=self.sound_context(step_id, steps), role=self.dag.role(step_id),
                       standing=self.standing(step_id, steps))

    def standing(self, step_id: str, steps: Mapping[str, StepRecord]) -> float:
        """The chance that the sub-questions `step_id` depends on were answered right: the product of their kept
        answers' scores. The question is right only when every step is, so a step's right answer is worth the
        question's value times this (`ReSoSettings.answer_value_usd`). Ancestors only: they are always done
        when the step starts, so the value does not depend on which unrelated branch happened to finish first."""
        standing = 1.0
        for ancestor in self.dag.ancestors(step_id):
            if self.dag.role(ancestor) == StepRole.SUB_QUESTION:
                record = steps.get(ancestor)
                standing *= min(max(record.kept_score, 0.0), 1.0) if record is not None else 1.0
        return standing

    async def _run(self, step_id: str, steps: Mapping[str, StepRecord]) -> StepRecord:
        return await self.subtask(step_id, steps).run(self)

    def _start_ready(self) -> None:
        for step_id in self._order:
            if step_id in self.results or step_id in self._tasks:
                continue
            if all(parent in self.results for parent in self.waits_for(step_id)):
                task = asyncio.create_task(self._run(step_id, self.results), name=f"subtask {step_id}")
                task.add_done_callback(functools.partial(self._finished, step_id))
                self._tasks[step_id] = task

    def _future(self, step_id: str) -> asyncio.Future[StepRecord]:
        """Resolved with the step's record when it finishes (it may not have started yet)."""
        if step_id not in self._futures:
            self._futures[step_id] = asyncio.get_running_loop().create_future()
        return self._futures[step_id]

    def _finished(self, step_id: str, task: asyncio.Task[StepRecord]) -> None:
        future = self._future(step_id)
        error = None if task.cancelled() else task.exception()  # a cancelled task has no exception to read
        if task.cancelled() or error is not None:
            # Forget the failed task (and its future) so that a retried node starts the subtask afresh.
            self._tasks.pop(step_id, None)
            self._futures.pop(step_id, None)
            if not future.done():
                # Cancelled (Ctrl-C) stays cancelled: a future set to CancelledError that nobody awaits any
                # more would be reported at exit ("Future exception was never retrieved").
                future.set_exception(error) if error is not None else future.cancel()
            return
        self.results[step_id] = task.result()
        if not future.done():
            future.set_result(task.result())
        self._start_ready()

    async def result(self, step_id: str, steps: Mapping[str, StepJSON]) -> StepRecord:
        """The record of `step_id`, running it (and, eagerly, whatever becomes ready) as needed; `steps` are
        the graph state's records (a resumed run's include those its checkpoint saved)."""
        self.results.update(step_records({known_id: record for known_id, record in steps.items()
                                          if known_id not in self.results}))
        if step_id in self.results:
            return self.results[step_id]
        # "all" waits for every earlier subtask, which LangGraph's edges (parents only) cannot express,
        # so that policy is always scheduled eagerly.
        settings = self.run.settings
        if settings.plan.schedule == Schedule.WAVES and settings.plan.context != ContextPolicy.ALL:
            record = await self._run(step_id, self.results)
            self.results[step_id] = record
            return record
        future = self._future(step_id)
        self._start_ready()
        return await asyncio.shield(future)

    async def execute(self, graph: Any, config: Any = None) -> dict[str, StepRecord]:
        """Invoke the compiled task-DAG `graph` with this run as its context; returns every subtask's record."""
        try:
            state = await graph.ainvoke({"steps": state_steps(self.results)}, config, context=self)
        finally:
            await self.aclose()
        return step_records(state.get("steps"))

    async def aclose(self) -> None:
        for task in self._tasks.values():
            if not task.done():
                task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
