"""The run context: everything the questions of one run share, built once by the caller.

A run (one `reso solve`, one `ReSo` instance, one `reso eval`) hands its `RunContext` to the top-level graph
as LangGraph's runtime context (`graph.ainvoke(..., context=run)`; the graph declares
`context_schema=RunContext` and its nodes read `runtime.context`). Each question then makes its own
`DagRun` (`reso.graphs.run`) from it, which is the task-DAG graph's runtime context in turn. Nothing of a
run travels through context variables or module globals.

LangGraph Studio gives no context, or JSON (`{"settings": {...}}`): the nodes then complete the context
with `ready()`, which takes the team built for those settings (`reso.graphs.team.team_for`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from pydantic import PlainValidator
from pydantic.json_schema import SkipJsonSchema

from reso.graphs.budget import Budget
from reso.graphs.learning import Learner
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import Team, team_for

T = TypeVar("T")

# A Python object only a Python caller can pass: left out of the JSON schema Studio draws the context form
# from, and taken as it is (the team holds protocols and models that no JSON describes).
PythonOnly = Annotated[T, PlainValidator(lambda value: value), SkipJsonSchema()]


@dataclass(kw_only=True, frozen=True)
class RunContext:
    """Settings, team, run budget and learning of one run."""

    settings: ReSoSettings = field(default_factory=ReSoSettings, metadata={
        "description": "How questions are planned, who may answer, how answers are judged, the budgets."})
    team: PythonOnly[Team | None] = field(default=None, metadata={
        "description": "Who answers and judges; None: the team built for `settings` (see `ready`)."})
    budget: PythonOnly[Budget | None] = field(default=None, metadata={
        "description": "The run's budget, which every question's budget also answers to; None: unlimited."})
    learner: PythonOnly[Learner] = field(default_factory=Learner, metadata={
        "description": "How rewards reach the DADB (reso.graphs.learning): as each subtask finishes (the "
                       "default), or once per question through the run's owner; nothing in test mode."})

    def __post_init__(self) -> None:
        if not isinstance(self.settings, ReSoSettings):  # JSON from Studio's assistant form
            settings: Mapping[str, Any] | None = self.settings
            object.__setattr__(self, "settings", ReSoSettings.coerce(settings))
        object.__setattr__(self, "learner", self.learner.for_mode(self.settings.mode))

    async def ready(self) -> RunContext:
        """This context with a team: itself, or a copy with the settings' team (built off the event loop)."""
        if self.team is not None:
            return self
        return dataclasses.replace(self, team=await asyncio.to_thread(team_for, self.settings))

    def require_team(self) -> Team:
        """The team; a context is ready (`ready`) before any question runs in it."""
        if self.team is None:
            raise RuntimeError("this run context has no team yet: use `await context.ready()` first")
        return self.team

    def question_budget(self) -> Budget:
        """A fresh budget for one question, by the settings, answering to the run's budget."""
        return self.settings.limits.question_budget(parent=self.budget)
