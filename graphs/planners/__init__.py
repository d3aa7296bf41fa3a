"""Planners turn a question into a `TaskDAG`: structural (MAS text format), LLM, given (dataset), auto."""

from reso.graphs.dag import FINAL_ID, PlanError, TaskDAG, TaskNode
from reso.graphs.plan_settings import PlannerName
from reso.graphs.planners.auto import (
    NO_MODEL_NOTE,
    AutoPlanner,
    PlannerConfigError,
    make_planner,
)
from reso.graphs.planners.base import Planner, PlanResult
from reso.graphs.planners.given import GivenPlanner, plan_from_item
from reso.graphs.planners.llm import LLMPlanner, Plan, PlanStep
from reso.graphs.planners.mas_format import answer_references, looks_structural, parse_mas_steps
from reso.graphs.planners.structural import StructuralPlanner

__all__ = [
    "FINAL_ID",
    "NO_MODEL_NOTE",
    "AutoPlanner",
    "GivenPlanner",
    "LLMPlanner",
    "Plan",
    "PlanError",
    "PlanResult",
    "PlanStep",
    "Planner",
    "PlannerConfigError",
    "PlannerName",
    "StructuralPlanner",
    "TaskDAG",
    "TaskNode",
    "answer_references",
    "looks_structural",
    "make_planner",
    "parse_mas_steps",
    "plan_from_item",
]
