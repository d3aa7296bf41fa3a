"""What every planner offers, and the report a planning run leaves behind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from reso.graphs.dag import TaskDAG


@runtime_checkable
class Planner(Protocol):
    """Turns a question into a task DAG."""

    name: str

    def plan(self, question: str) -> TaskDAG:
        """The plan for `question`."""
        ...

    async def aplan(self, question: str) -> TaskDAG:
        """The plan for `question`, without blocking the event loop."""
        ...

    def plan_with_report(self, question: str) -> PlanResult:
        """The plan for `question` and how it came about."""
        ...

    async def aplan_with_report(self, question: str) -> PlanResult:
        """`plan_with_report` without blocking the event loop."""
        ...


@dataclass(slots=True)
class PlanResult:
    """A plan and how it came about.

    Attributes:
        dag: The plan.
        planner: Name of the planner that produced `dag` (for `auto`, the one it delegated to).
        attempts: Model calls made (0 for planners without a model).
        errors: One line per failed attempt, in order.
        notes: Repairs applied to the plan and decisions taken (fallbacks, planner choice).
        fallback: True when the plan is the one-step fallback rather than a real decomposition.
        input_tokens: Prompt tokens the planner's model reported, summed over attempts.
        output_tokens: Completion tokens the planner's model reported, summed over attempts.
    """

    dag: TaskDAG
    planner: str
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fallback: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


class ModelFreePlanner(ABC):
    """Base of planners that need no model and no I/O (structural, given): subclasses implement
    `plan_with_report`; the rest follows from it, and the async forms answer on the event loop."""

    name: str = "planner"

    @abstractmethod
    def plan_with_report(self, question: str) -> PlanResult:
        """The plan for `question` and how it came about."""

    def plan(self, question: str) -> TaskDAG:
        return self.plan_with_report(question).dag

    async def aplan(self, question: str) -> TaskDAG:
        return self.plan(question)

    async def aplan_with_report(self, question: str) -> PlanResult:
        return self.plan_with_report(question)
