"""The Python API: `solve` / `asolve` a question, `astream` its progress, resume a run from its checkpoint.

```python
from reso.graphs.api import ReSo

reso = ReSo({"asking.k": 2}, answer_value_usd=0.05)   # sections by dotted key, run-wide as keywords
result = reso.solve("Janet's ducks lay 16 eggs per day. ...")
print(result.answer, result.usage.cost_usd)
```
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from reso.graphs.background_loop import SYNC_LOOP
from reso.graphs.checkpointer import checkpoint_key, checkpoint_location, open_checkpointer
from reso.graphs.context import RunContext
from reso.graphs.dadb_notice import UntrainedDADBWarning, untrained_dadb
from reso.graphs.run_records import Result, RunStatus
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, team_for


@dataclasses.dataclass(frozen=True)
class SavedRun:
    """A thread's run in a checkpoint store: its result so far (the question, the plan once made; the
    subtasks of an unfinished run are kept in the subgraph's checkpoints, not here) and whether it ended."""

    result: Result
    ended: bool


class ReSo:
    """A configured ReSo system: its run context (settings, the team they describe) and optionally a
    checkpoint store.

    With `checkpoint_path` (a SQLite file, or a `postgresql://` URL: `reso.graphs.checkpointer`), every run
    is saved under its `thread_id`; solving again with the same `thread_id` resumes an interrupted run
    instead of starting over. In training mode such a run learns once (`reso.graphs.learning.Learner`):
    its DADB updates are applied when the question is answered, rebuilt from the saved records of every
    subtask (those finished before a crash included), in one transaction keyed by checkpoint store and
    thread. Without a checkpoint, the run context's learner decides: updates are applied as each subtask
    finishes, unless the context a caller hands in (`ReSo.in_run`) learns once: its owner applies them then.
    """

    def __init__(self, settings: ReSoSettings | Mapping[str, Any] | None = None, *, team: Team | None = None,
                 checkpoint_path: str | Path | None = None, **run_wide: Any) -> None:
        """`settings`: a `ReSoSettings`, a mapping nested by section (`{"asking": {"k": 2}}`) or by dotted key
        (`{"asking.k": 2}`), or None (the defaults); `run_wide`: the run-wide settings as keywords (`pool`, `db`,
        `mode`, `seed`, `answer_value_usd`), over `settings`."""
        base = ReSoSettings.coerce(settings)
        self.settings = base.replace(**run_wide) if run_wide else base
        self.checkpoint_path = checkpoint_location(checkpoint_path)
        self._given = RunContext(settings=self.settings, team=team)
        self._context: RunContext | None = None
        self._review_graph: Any = None

    @classmethod
    def in_run(cls, context: RunContext, *, checkpoint_path: str | Path | None = None) -> ReSo:
        """A ReSo whose questions run in `context`, built by its caller (the evaluation runner: with the
        run's budget and learner; `reso solve`: with its `--checkpoint`)."""
        reso = cls(context.settings, checkpoint_path=checkpoint_path)
        reso._given = context
        return reso

    @property
    def team(self) -> Team:
        return self._given.team or team_for(self.settings)

    async def run_context(self) -> RunContext:
        """The context every question of this instance runs in, made ready once (its team built off the
        event loop when none was given)."""
        if self._context is None:
            built_here = self._given.team is None
            context = await self._given.ready()
            if built_here:  # a team handed in is its owner's to vouch for (the CLI says so itself)
                notice = await asyncio.to_thread(untrained_dadb, context.settings, context.require_team().dadb)
                if notice is not None:  # shown once per process, as warnings are
                    warnings.warn(notice.message, UntrainedDADBWarning, stacklevel=1)
            if self.checkpoint_path is not None:  # this instance owns the run's learning: once per thread
                learner = context.learner.once_where_possible(self.settings, context.require_team().selector)
                context = dataclasses.replace(context, learner=learner)
            self._context = context
        return self._context

    async def _learn_once(self, run: RunContext, result: Result, thread_id: str) -> None:
        """Apply a finished checkpointed run's pending updates (`Learner.pending`), unless this thread was
        learned before; without a checkpoint, whoever handed in the run context owns its learning."""
        if self.checkpoint_path is None or result.status == RunStatus.AWAITING_REVIEW:
            return
        updates = run.learner.pending(result.steps)
        if updates is not None:
            key = f"{checkpoint_key(self.checkpoint_path)}#{thread_id}"
            await asyncio.to_thread(run.learner.apply, key, updates)

    @contextlib.asynccontextmanager
    async def _graph(self) -> AsyncIterator[Any]:
        from reso.graphs.graph import build_graph, graph
        from reso.graphs.state import state_serializer

        if self.checkpoint_path is None:
            if not self.settings.plan.review:
                # Without a checkpointer the compiled graph holds no per-run state: the module's one serves.
                yield graph
                return
            # A plan review pauses the run, which needs somewhere to keep it: memory, for this instance.
            if self._review_graph is None:
                from langgraph.checkpoint.memory import InMemorySaver

                self._review_graph = build_graph(checkpointer=InMemorySaver(serde=state_serializer()))
            yield self._review_graph
            return
        async with open_checkpointer(self.checkpoint_path, serde=state_serializer()) as saver:
            yield build_graph(checkpointer=saver)

    @staticmethod
    def _input(question: str, plan: Sequence[Mapping[str, Any]] | None,
               references: Mapping[str, str] | None) -> dict[str, Any]:
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question must be a non-empty string")
        payload: dict[str, Any] = {"question": question}
        if plan:
            payload["plan"] = [dict(step) for step in plan]
        if references:
            payload["references"] = {str(k): str(v) for k, v in references.items()}
        return payload

    async def _start_or_resume(self, graph: Any, payload: dict[str, Any], config: dict[str, Any]) -> Any:
        """The input to pass: None resumes a saved, unfinished run of the same thread."""
        if self.checkpoint_path is None and not self.settings.plan.review:
            return payload
        snapshot = await graph.aget_state(config)
        return None if snapshot.next else payload

    async def astream(self, question: str, *, plan: Sequence[Mapping[str, Any]] | None = None,
                      references: Mapping[str, str] | None = None,
                      thread_id: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Progress events as they happen (`plan`, `subtask_started`, `candidates`, `subtask_done`),
        then one `{"event": "result", "result": Result}`."""
        payload = self._input(question, plan, references)
        config = {"configurable": {"thread_id": thread_id or uuid.uuid4().hex}}
        started = time.monotonic()
        final: dict[str, Any] = dict(payload)
        run = await self.run_context()
        async with self._graph() as graph:
            start = await self._start_or_resume(graph, payload, config)
            async for mode, chunk in graph.astream(start, config, context=run,
                                                   stream_mode=["updates", "custom", "values"]):
                if mode == "custom":
                    yield chunk
                elif mode == "values":
                    final.update(chunk)
                elif "plan" in chunk and chunk["plan"]:
                    yield {"event": "plan", "plan": chunk["plan"]["plan"]}
                elif "__interrupt__" in chunk:
                    yield {"event": "interrupt", "value": chunk["__interrupt__"][0].value}
                    return
        final["latency_s"] = final.get("latency_s") or time.monotonic() - started
        result = Result.from_state(final)
        await self._learn_once(run, result, config["configurable"]["thread_id"])
        yield {"event": "result", "result": result}

    async def asolve(self, question: str, *, plan: Sequence[Mapping[str, Any]] | None = None,
                     references: Mapping[str, str] | None = None, thread_id: str | None = None) -> Result:
        """Answer one question and return the full result.

        With `plan.review` set, the run pauses after planning: the result has status "awaiting_review",
        the proposed plan and a `thread_id`; `aresume(thread_id, plan=...)` continues it.
        """
        payload = self._input(question, plan, references)
        thread = thread_id or uuid.uuid4().hex
        config = {"configurable": {"thread_id": thread}}
        run = await self.run_context()
        async with self._graph() as graph:
            start = await self._start_or_resume(graph, payload, config)
            output = await graph.ainvoke(start, config, context=run)
            if self.checkpoint_path is not None or self.settings.plan.review:
                output = {**dict((await graph.aget_state(config)).values), **output}
        result = self._result({**payload, **output}, thread)
        await self._learn_once(run, result, thread)
        return result

    async def aresume(self, thread_id: str, *, plan: Sequence[Mapping[str, Any]] | None = None) -> Result:
        """Continue a run paused for plan review, with an edited `plan` or (None) the proposed one."""
        from langgraph.types import Command

        config = {"configurable": {"thread_id": thread_id}}
        # Always a mapping: `{"plan": None}` keeps the proposed plan (a bare None is not a resume value).
        decision = {"plan": [dict(step) for step in plan] if plan else None}
        run = await self.run_context()
        async with self._graph() as graph:
            snapshot = await graph.aget_state(config)
            if not snapshot.next:
                raise ValueError(f"thread {thread_id!r} has no paused run to resume")
            output = await graph.ainvoke(Command(resume=decision), config, context=run)
            state = {**dict((await graph.aget_state(config)).values), **output}
        result = self._result(state, thread_id)
        await self._learn_once(run, result, thread_id)
        return result

    async def asaved(self, thread_id: str) -> SavedRun | None:
        """`thread_id`'s run as the checkpoint store holds it; None without a store or a saved question."""
        if self.checkpoint_path is None:
            return None
        async with self._graph() as graph:
            snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
        state = dict(snapshot.values)
        if not state.get("question"):
            return None
        return SavedRun(self._result(state, thread_id), ended=not snapshot.next)

    @staticmethod
    def _result(state: dict[str, Any], thread_id: str) -> Result:
        paused = bool(state.pop("__interrupt__", None))
        if paused:
            state = {**state, "status": RunStatus.AWAITING_REVIEW.value}
        return Result.from_state({**state, "thread_id": thread_id})

    def solve(self, question: str, **kwargs: Any) -> Result:
        """Synchronous `asolve` (runs on the process's background event loop: `reso.graphs.background_loop`)."""
        return SYNC_LOOP.run(self.asolve(question, **kwargs))

    def resume(self, thread_id: str, **kwargs: Any) -> Result:
        """Synchronous `aresume`."""
        return SYNC_LOOP.run(self.aresume(thread_id, **kwargs))


def solve(question: str, **settings: Any) -> Result:
    """Answer `question` with a ReSo system configured by keyword settings (see ReSoSettings)."""
    return ReSo(**settings).solve(question)


async def asolve(question: str, **settings: Any) -> Result:
    return await ReSo(**settings).asolve(question)
