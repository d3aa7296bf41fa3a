"""The `plan` section of the run settings: how a question becomes a task DAG, and how its DAG runs.

The planner (`reso.graphs.planners`) reads `planner`, `planner_model` and `review`; the DAG run
(`reso.graphs.run`, `reso.graphs.subtask`) reads `context`, `schedule` and `integration`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["ContextPolicy", "Integration", "PlanSettings", "PlannerName", "Schedule"]


class PlannerName(StrEnum):
    """The planners a run may name (`reso.graphs.planners.auto.make_planner`, the setting `plan.planner`)."""

    AUTO = "auto"
    STRUCTURAL = "structural"
    LLM = "llm"
    GIVEN = "given"


class ContextPolicy(StrEnum):
    """Which earlier answers a subtask sees."""

    PARENTS = "parents"
    ANCESTORS = "ancestors"
    ALL = "all"


class Schedule(StrEnum):
    """When a subtask starts: as soon as its parents finish (`eager`), or in LangGraph supersteps (`waves`)."""

    EAGER = "eager"
    WAVES = "waves"


class Integration(StrEnum):
    """Who answers a plan's integration step: the pool's exact tool (`tool`), or the selector (`select`)."""

    TOOL = "tool"
    SELECT = "select"


@dataclass(kw_only=True, frozen=True)
class PlanSettings:
    """How questions are planned and their plans run."""

    planner: PlannerName = field(default=PlannerName.AUTO, metadata={"description": (
        "auto (a given plan, else the structural one, else the LLM planner) | structural | llm | given.")})
    planner_model: str = field(default="", metadata={"description": "Model spec of the LLM planner."})
    review: bool = field(default=False, metadata={"answers": False, "description": (
        "Pause after planning so the plan can be edited (interactive runs; never an evaluation).")})
    context: ContextPolicy = field(default=ContextPolicy.PARENTS, metadata={"description": (
        "Which earlier answers a subtask sees: parents | ancestors | all.")})
    schedule: Schedule = field(default=Schedule.EAGER, metadata={"answers": False, "description": (
        "eager: a subtask starts as soon as its parents finish; waves: LangGraph supersteps.")})
    integration: Integration = field(default=Integration.TOOL, metadata={"description": (
        "tool: a plan's integration step (the final step of a plan of several, `TaskDAG.role`) goes to the "
        "pool's exact tool for every method, when the pool has one; select: chosen like any other subtask.")})

    def __post_init__(self) -> None:
        for name, kind in (("planner", PlannerName), ("context", ContextPolicy), ("schedule", Schedule),
                           ("integration", Integration)):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, kind(value))  # frozen: the text becomes its member once, here
            except ValueError:
                raise ValueError(f"unknown plan.{name} {value!r}; choose one of {', '.join(kind)}") from None
