"""The engine: a question's plan, its run through the team, and the ways in.

- Plans: `TaskDAG` (validated subtasks and their dependencies) and the planners that write it
  (`reso.graphs.planners`).
- The run: `RunContext` (settings, team, budgets, learning), built once by whoever starts a run and handed
  to the graphs as LangGraph's runtime context; `DagRun` executes one question's DAG, each subtask through
  the coarse selection and the fine stage (`reso.graphs.subtask`, `reso.graphs.fine_stage`), and records
  what happened (`StepRecord`, `Result`); the run's `Learner` decides how rewards reach the DADB: as each
  subtask finishes, or once per question (`LearnOnce`).
- The ways in: `build_graph` (the top-level LangGraph graph that `langgraph.json` exports to Studio) and
  the Python API `ReSo` / `solve`.

Public names are imported on first use, so `import reso.graphs` loads neither LangGraph nor the model
libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.graphs.api import ReSo, asolve, solve
    from reso.graphs.budget import Budget
    from reso.graphs.context import RunContext
    from reso.graphs.dag import PlanError, TaskDAG, TaskNode
    from reso.graphs.escalation import Adaptive, AskingPolicy, AskingRule, Cascade, FixedK, PricedAsking
    from reso.graphs.graph import build_graph
    from reso.graphs.learning import Learner, LearnOnce
    from reso.graphs.run import DagRun
    from reso.graphs.run_records import CandidateRecord, Result, StepRecord, Usage
    from reso.graphs.settings import ReSoSettings
    from reso.graphs.team import Team, build_team, team_for

__all__ = [
    "Adaptive",
    "AskingPolicy",
    "AskingRule",
    "Budget",
    "CandidateRecord",
    "Cascade",
    "DagRun",
    "FixedK",
    "LearnOnce",
    "Learner",
    "PricedAsking",
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

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "api": ["ReSo", "asolve", "solve"],
    "budget": ["Budget"],
    "context": ["RunContext"],
    "dag": ["PlanError", "TaskDAG", "TaskNode"],
    "escalation": ["Adaptive", "AskingPolicy", "AskingRule", "Cascade", "FixedK", "PricedAsking"],
    "graph": ["build_graph"],
    "learning": ["LearnOnce", "Learner"],
    "run_records": ["CandidateRecord", "Result", "StepRecord", "Usage"],
    "run": ["DagRun"],
    "settings": ["ReSoSettings"],
    "team": ["Team", "build_team", "team_for"],
})
