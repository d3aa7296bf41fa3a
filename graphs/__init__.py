"""The engine: a question's plan, its run through the team, and the ways in.

- Plans: `TaskDAG` (validated subtasks and their dependencies) and the planners that write it
  (`reso.graphs.planners`).
- The run: `RunContext` (settings, team, budgets, learning), built once by whoever starts a run and handed
  to the graphs as LangGraph's runtime context; `DagRun` executes one question's DAG, each subtask through
  the coarse selection and the fine stage (`reso.graphs.subtask`, `reso.graphs.fine_stage`), and records
  what happened (`StepRecord`, `Result`); `LearnOnce` applies a finished question's DADB updates once.
- The ways in: `build_graph` (the top-level LangGraph graph that `langgraph.json` exports to Studio) and
  the Python API `ReSo` / `solve`.

Public names are imported on first use, so `import reso.graphs` loads neither LangGraph nor the model
libraries.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.graphs.api import ReSo, asolve, solve
    from reso.graphs.budget import Budget
    from reso.graphs.context import RunContext
    from reso.graphs.dag import PlanError, TaskDAG, TaskNode
    from reso.graphs.escalation import Adaptive, AskingPolicy, Cascade, FixedK
    from reso.graphs.graph import build_graph
    from reso.graphs.learning import LearnOnce
    from reso.graphs.records import CandidateRecord, Result, StepRecord, Usage
    from reso.graphs.run import DagRun
    from reso.graphs.settings import ReSoSettings
    from reso.graphs.team import Team, build_team, team_for

_EXPORTS: dict[str, str] = {
    "ReSo": "reso.graphs.api",
    "asolve": "reso.graphs.api",
    "solve": "reso.graphs.api",
    "Budget": "reso.graphs.budget",
    "RunContext": "reso.graphs.context",
    "PlanError": "reso.graphs.dag",
    "TaskDAG": "reso.graphs.dag",
    "TaskNode": "reso.graphs.dag",
    "Adaptive": "reso.graphs.escalation",
    "AskingPolicy": "reso.graphs.escalation",
    "Cascade": "reso.graphs.escalation",
    "FixedK": "reso.graphs.escalation",
    "build_graph": "reso.graphs.graph",
    "LearnOnce": "reso.graphs.learning",
    "CandidateRecord": "reso.graphs.records",
    "Result": "reso.graphs.records",
    "StepRecord": "reso.graphs.records",
    "Usage": "reso.graphs.records",
    "DagRun": "reso.graphs.run",
    "ReSoSettings": "reso.graphs.settings",
    "Team": "reso.graphs.team",
    "build_team": "reso.graphs.team",
    "team_for": "reso.graphs.team",
}

__all__ = [
    "Adaptive",
    "AskingPolicy",
    "Budget",
    "CandidateRecord",
    "Cascade",
    "DagRun",
    "FixedK",
    "LearnOnce",
    "PlanError",
    "ReSo",
    "ReSoSettings",
    "Result",
    "RunContext",
    "StepRecord",
    "TaskDAG",
    "TaskNode",
    "Team",
    "Usage",
    "asolve",
    "build_graph",
    "build_team",
    "solve",
    "team_for",
]

def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562), so importing the package loads none of its heavy dependencies.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
