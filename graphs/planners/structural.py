"""The structural planner: reads the exact DAG out of a MAS-format question, without any model."""

from __future__ import annotations

from reso.graphs.dag import TaskDAG
from reso.graphs.plan_settings import PlannerName
from reso.graphs.planners.base import ModelFreePlanner, PlanResult
from reso.graphs.planners.mas_format import parse_mas_steps


class StructuralPlanner(ModelFreePlanner):
    """Plans MAS benchmark questions ("The answer is recorded as Answer[i]" blocks, then a final step).

    Node ids are the answer indices ("0", "1", ...) plus "final"; nodes keep the text's order. References
    to unknown answers or to a block's own answer are dropped, and an answer the final step ignores is
    added to its dependencies; each such repair is listed in `PlanResult.notes` / `TaskDAG.repair_notes`.
    """

    name = PlannerName.STRUCTURAL.value

    def plan_with_report(self, question: str) -> PlanResult:
        """The plan and its report.

        Raises:
            PlanError: The question is not in the MAS format or its references do not form a DAG.
        """
        dag = TaskDAG.from_steps(parse_mas_steps(question))
        return PlanResult(dag=dag, planner=self.name, notes=dag.repair_notes)
