"""The `auto` planner and `make_planner`: pick a planner by name, or per question by its format.

`auto` reads MAS-format questions structurally (exact, no model) and gives every other question to the LLM
planner. Without a planner model it does not fail: such a question is planned as a single step and the
report says so (how to configure a model is in the note), which keeps the offline default usable.
An explicit `llm` planner without a model is a configuration error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel

from reso.graphs.dag import PlanError, TaskDAG
from reso.graphs.plan_settings import PlannerName
from reso.graphs.planners.base import Planner, PlanResult
from reso.graphs.planners.given import GivenPlanner
from reso.graphs.planners.llm import LLMPlanner
from reso.graphs.planners.mas_format import looks_structural
from reso.graphs.planners.structural import StructuralPlanner

NO_MODEL_NOTE = (
    "no planner model is configured, so the question is planned as a single step; "
    "pass a chat model (Python: make_planner('auto', model=...); CLI: --model PROVIDER:MODEL) to decompose it"
)


class PlannerConfigError(ValueError):
    """A planner was requested without what it needs (a model, dataset items) or under an unknown name."""


class AutoPlanner:
    """Structural planning for MAS-format questions, the LLM planner (or one step) for the rest."""

    name = PlannerName.AUTO.value

    def __init__(self, model: BaseChatModel | None = None, *, max_retries: int = 2) -> None:
        self.structural = StructuralPlanner()
        self.llm = LLMPlanner(model, max_retries=max_retries) if model is not None else None

    def _structural(self, question: str) -> tuple[PlanResult | None, list[str]]:
        if not looks_structural(question):
            return None, []
        try:
            return self.structural.plan_with_report(question), []
        except PlanError as error:
            return None, [f"the question looks MAS-formatted but cannot be read structurally: {error}"]

    def _without_model(self, question: str, notes: list[str]) -> PlanResult:
        if not question.strip():
            raise PlanError("the question is empty")
        return PlanResult(dag=TaskDAG.single_step(question.strip()), planner=self.name,
                          notes=[*notes, NO_MODEL_NOTE], fallback=True)

    def plan_with_report(self, question: str) -> PlanResult:
        """The plan and its report (`planner` names the planner that made it)."""
        result, notes = self._structural(question)
        if result is not None:
            return result
        if self.llm is None:
            return self._without_model(question, notes)
        result = self.llm.plan_with_report(question)
        result.notes[:0] = notes
        return result

    async def aplan_with_report(self, question: str) -> PlanResult:
        """Async `plan_with_report`."""
        result, notes = self._structural(question)
        if result is not None:
            return result
        if self.llm is None:
            return self._without_model(question, notes)
        result = await self.llm.aplan_with_report(question)
        result.notes[:0] = notes
        return result

    def plan(self, question: str) -> TaskDAG:
        """The plan for `question`."""
        return self.plan_with_report(question).dag

    async def aplan(self, question: str) -> TaskDAG:
        """Async `plan`."""
        return (await self.aplan_with_report(question)).dag


def make_planner(
    name: str = PlannerName.AUTO,
    model: BaseChatModel | None = None,
    *,
    items: Iterable[Mapping[str, Any]] | None = None,
    max_retries: int = 2,
) -> Planner:
    """A planner by name.

    Args:
        name: `auto` (structural for MAS-format questions, else LLM, else one step), `structural`, `llm`
            or `given`.
        model: The chat model of the LLM planner (required for `llm`, optional for `auto`).
        items: Dataset items with ground-truth plans (required for `given`).
        max_retries: Extra LLM attempts after an invalid plan.

    Raises:
        PlannerConfigError: Unknown name, `llm` without a model, or `given` without items.
    """
    try:
        kind = PlannerName(name)
    except ValueError:
        raise PlannerConfigError(f"unknown planner {name!r}; choose one of {', '.join(PlannerName)}") from None
    match kind:
        case PlannerName.AUTO:
            return AutoPlanner(model, max_retries=max_retries)
        case PlannerName.STRUCTURAL:
            return StructuralPlanner()
        case PlannerName.LLM:
            if model is None:
                raise PlannerConfigError(
                    "the llm planner needs a chat model: pass model=... in Python or --model PROVIDER:MODEL "
                    "on the command line (or use --planner auto, which plans without a model)"
                )
            return LLMPlanner(model, max_retries=max_retries)
        case PlannerName.GIVEN:
            if items is None:
                raise PlannerConfigError("the given planner needs dataset items with a gt_plan field (items=...)")
            return GivenPlanner(items)
