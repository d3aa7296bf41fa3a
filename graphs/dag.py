"""The task DAG: a question's subtasks, their dependencies, and the one final step that answers it.

A plan is valid when it has at least one step, unique ids, no reference to an unknown step, no cycle, and
exactly one final step (the step no other step depends on). Plans from a model are often slightly off, so
`TaskDAG.from_steps` repairs what has a single sensible reading (see `repair_plan`) and rejects the rest
with a `PlanError` naming the step.

The final step of a plan of several steps combines earlier answers: it is the plan's integration step
(`TaskDAG.role`, `StepRole.INTEGRATION`) whatever its id, so a plan whose final step is not called `final`
(`FINAL_ID`, the MAS format's id) has it answered as one all the same. A one-step plan's lone step is the
whole question, not an integration.

Several unused steps ("sinks"): the strict model rejects them; `repair_plan` keeps the last of them in list
order as the final step and makes it depend on the others, so no computed answer is silently dropped.
Joining sinks can never close a cycle, because the step that gains dependencies has no dependants.

Building a `TaskDAG(nodes=...)` directly runs the same checks; pydantic then reports a failed check as a
`ValidationError` (also a `ValueError`) carrying the `PlanError` message. `from_steps` raises the
`PlanError` itself.
"""

from __future__ import annotations

import graphlib
import heapq
from collections import Counter
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

FINAL_ID = "final"
"""The id the MAS text format, the datasets and the one-step plan give the final step (other plans may not)."""


class StepRole(StrEnum):
    """What a step is to its plan (`TaskDAG.role`)."""

    SUB_QUESTION = "sub-question"
    """Answers part of the question, for later steps."""
    INTEGRATION = "integration"
    """The final step of a plan of several: combines earlier answers into the question's."""
    WHOLE_QUESTION = "whole question"
    """A one-step plan's lone step: the question itself."""


class PlanError(ValueError):
    """A plan that cannot be turned into a valid task DAG; the message names the step(s) at fault."""


class TaskNode(BaseModel):
    """One subtask: an id, what to do, and the ids of the steps whose answers it needs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Unique step id, e.g. '1' or 'final'.")
    instruction: str = Field(min_length=1, description="What this step must compute, self-contained.")
    depends_on: list[str] = Field(default_factory=list, description="Ids of the steps this one needs.")


class TaskDAG(BaseModel):
    """A validated plan. `nodes` keeps the planner's order; graph queries break ties by that order."""

    model_config = ConfigDict(frozen=True)

    nodes: list[TaskNode]

    _index: dict[str, int] = PrivateAttr(default_factory=dict)
    _children: dict[str, list[str]] = PrivateAttr(default_factory=dict)
    _order: list[str] = PrivateAttr(default_factory=list)
    _levels: list[list[str]] = PrivateAttr(default_factory=list)
    _ancestors: dict[str, list[str]] = PrivateAttr(default_factory=dict)
    _repair_notes: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _validate_graph(self) -> TaskDAG:
        check_steps([{"id": n.id, "instruction": n.instruction, "depends_on": n.depends_on} for n in self.nodes])
        # Locals first: pydantic's private-attribute access is slow enough to matter per question.
        index = {node.id: i for i, node in enumerate(self.nodes)}
        children: dict[str, list[str]] = {node.id: [] for node in self.nodes}
        for node in self.nodes:
            for dep in node.depends_on:
                children[dep].append(node.id)
        for kids in children.values():
            kids.sort(key=index.__getitem__)
        order = _stable_topological_order(self.nodes, index, children)
        self._index, self._children, self._order = index, children, order
        self._levels = _waves(self.nodes, index, order)
        return self

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_steps(cls, steps: Sequence[Mapping[str, Any]], *, repair: bool = True) -> TaskDAG:
        """Builds a DAG from `[{"id", "instruction", "depends_on"}, ...]` (the `plan` JSON format).

        Args:
            steps: The steps in any order; ids may be strings or integers.
            repair: Apply the unambiguous repairs of `repair_plan` first (recorded in `repair_notes`);
                when False, any defect is an error.

        Raises:
            PlanError: The steps do not form a valid plan; the message names the step(s).
        """
        if repair:
            fixed, notes = repair_plan(steps)
        else:
            fixed, notes = normalise_steps(steps), []
            check_steps(fixed)
        dag = cls(nodes=[TaskNode(**step) for step in fixed])
        dag._repair_notes = notes
        return dag

    @classmethod
    def single_step(cls, instruction: str, node_id: str = FINAL_ID) -> TaskDAG:
        """The trivial plan: the whole question as one step."""
        return cls(nodes=[TaskNode(id=node_id, instruction=instruction)])

    # -- queries --------------------------------------------------------------------------------------

    @property
    def final_id(self) -> str:
        """The id of the final step: the one whose answer is the question's answer."""
        return next(node.id for node in self.nodes if not self._children[node.id])

    def role(self, id: str) -> StepRole:
        """What step `id` is to this plan (see `StepRole`)."""
        self.node(id)
        if id != self.final_id:
            return StepRole.SUB_QUESTION
        return StepRole.INTEGRATION if len(self.nodes) > 1 else StepRole.WHOLE_QUESTION

    @property
    def ids(self) -> list[str]:
        """Step ids in list order."""
        return [node.id for node in self.nodes]

    @property
    def repair_notes(self) -> list[str]:
        """What `from_steps` repaired to make the plan valid (empty when nothing was)."""
        return list(self._repair_notes)

    def __len__(self) -> int:
        return len(self.nodes)

    def node(self, id: str) -> TaskNode:
        """The step with this id.

        Raises:
            KeyError: No step has this id.
        """
        try:
            return self.nodes[self._index[id]]
        except KeyError:
            raise KeyError(f"no step with id {id!r} in this plan") from None

    def parents(self, id: str) -> list[str]:
        """Ids of the steps `id` depends on directly, in its `depends_on` order."""
        return list(self.node(id).depends_on)

    def children(self, id: str) -> list[str]:
        """Ids of the steps that depend directly on `id`, in list order."""
        self.node(id)
        return list(self._children[id])

    def ancestors(self, id: str) -> list[str]:
        """Ids of every step `id` depends on, directly or not, in topological order."""
        cached = self._ancestors.get(id)
        if cached is None:
            seen: set[str] = set()
            stack = list(self.node(id).depends_on)
            while stack:
                current = stack.pop()
                if current not in seen:
                    seen.add(current)
                    stack.extend(self.nodes[self._index[current]].depends_on)
            cached = self._ancestors[id] = [step for step in self._order if step in seen]
        return list(cached)

    def descendants(self, id: str) -> list[str]:
        """Ids of every step that depends on `id`, directly or not, in topological order."""
        seen: set[str] = set()
        stack = self.children(id)
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(self._children[current])
        return [step for step in self._order if step in seen]

    def topological_order(self) -> list[str]:
        """Step ids with every step after its dependencies; among ready steps, list order wins.

        A list that is already in topological order comes back unchanged.
        """
        return list(self._order)

    def levels(self) -> list[list[str]]:
        """Waves of steps that can run together: a step sits one wave after its latest dependency."""
        return [list(wave) for wave in self._levels]

    def critical_path(self, durations: Mapping[str, float]) -> float:
        """The longest chain of durations through the DAG: the least wall time with unlimited parallelism.

        Args:
            durations: Seconds (or any unit) per step id; every step must have one.

        Raises:
            KeyError: A step has no duration.
        """
        missing = [step for step in self.ids if step not in durations]
        if missing:
            raise KeyError(f"no duration for step(s) {', '.join(map(repr, missing))}")
        finish: dict[str, float] = {}
        for step in self._order:
            parents = self.nodes[self._index[step]].depends_on
            finish[step] = float(durations[step]) + max((finish[p] for p in parents), default=0.0)
        return max(finish.values())

    def to_steps(self) -> list[dict[str, Any]]:
        """The plan as `[{"id", "instruction", "depends_on"}, ...]`, in list order."""
        return [
            {"id": node.id, "instruction": node.instruction, "depends_on": list(node.depends_on)}
            for node in self.nodes
        ]


def _stable_topological_order(nodes: list[TaskNode], index: dict[str, int],
                              children: dict[str, list[str]]) -> list[str]:
    # Kahn's algorithm with a heap keyed by list position: graphlib offers no tie-breaking order.
    remaining = {node.id: len(node.depends_on) for node in nodes}
    ready = [i for i, node in enumerate(nodes) if not node.depends_on]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        step = nodes[heapq.heappop(ready)].id
        order.append(step)
        for child in children[step]:
            remaining[child] -= 1
            if remaining[child] == 0:
                heapq.heappush(ready, index[child])
    return order


def _waves(nodes: list[TaskNode], index: dict[str, int], order: list[str]) -> list[list[str]]:
    depth: dict[str, int] = {}
    for step in order:
        depth[step] = 1 + max((depth[p] for p in nodes[index[step]].depends_on), default=-1)
    waves: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for node in nodes:
        waves[depth[node.id]].append(node.id)
    return waves


def normalise_steps(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Steps as plain dicts with string ids, stripped text and list dependencies; no repairs.

    Raises:
        PlanError: A step is not a mapping, or lacks an id or an instruction.
    """
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
        raise PlanError(f"a plan must be a list of steps, got {type(steps).__name__}")
    out: list[dict[str, Any]] = []
    for position, step in enumerate(steps, start=1):
        if not isinstance(step, Mapping):
            raise PlanError(f"step {position} is a {type(step).__name__}, not an object with an id")
        raw_id = step.get("id")
        if raw_id is None or not str(raw_id).strip():
            raise PlanError(f"step {position} has no id")
        step_id = str(raw_id).strip()
        instruction = step.get("instruction")
        if not isinstance(instruction, str) or not instruction.strip():
            raise PlanError(f"step {step_id!r} has no instruction")
        deps = step.get("depends_on") or []
        if isinstance(deps, (str, int)):
            deps = [deps]
        if not isinstance(deps, Sequence):
            raise PlanError(f"step {step_id!r}: depends_on must be a list of step ids")
        out.append({"id": step_id, "instruction": instruction.strip(),
                    "depends_on": [str(dep).strip() for dep in deps]})
    return out


def check_steps(steps: Sequence[Mapping[str, Any]]) -> None:
    """Checks normalised steps against every rule of a valid plan.

    Raises:
        PlanError: The first rule broken, naming the step(s).
    """
    known = _unique_ids(steps)
    for step in steps:
        deps = step["depends_on"]
        if step["id"] in deps:
            raise PlanError(f"step {step['id']!r} depends on itself")
        unknown = [dep for dep in deps if dep not in known]
        if unknown:
            raise PlanError(f"step {step['id']!r} depends on unknown step(s) {', '.join(map(repr, unknown))}")
        if len(set(deps)) != len(deps):
            raise PlanError(f"step {step['id']!r} lists a dependency twice")
    try:
        graphlib.TopologicalSorter({step["id"]: step["depends_on"] for step in steps}).prepare()
    except graphlib.CycleError as error:
        cycle = list(reversed(error.args[1]))
        raise PlanError(f"steps form a cycle: {' needs '.join(map(repr, cycle))}") from None
    sinks = _sinks(steps)
    if len(sinks) > 1:
        raise PlanError(
            f"a plan needs exactly one final step (the one no other step depends on); "
            f"step(s) {', '.join(map(repr, sinks))} are all unused by other steps"
        )


def repair_plan(steps: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Applies the repairs that have one sensible reading, then checks the result.

    Repairs: a step's dependency on itself is dropped; dependencies on unknown ids are dropped; repeated
    dependencies are listed once; when several steps are unused by others, the last of them (in list
    order) becomes the final step and depends on the others.

    Returns:
        The repaired steps (plain dicts, list order kept) and one note per repair.

    Raises:
        PlanError: An empty plan, a repeated id, a missing instruction or a cycle, naming the step(s).
    """
    fixed = normalise_steps(steps)
    notes: list[str] = []
    known = _unique_ids(fixed)
    for step in fixed:
        deps: list[str] = []
        for dep in step["depends_on"]:
            if dep == step["id"]:
                notes.append(f"step {dep!r}: dropped its dependency on itself")
            elif dep not in known:
                notes.append(f"step {step['id']!r}: dropped the dependency on unknown step {dep!r}")
            elif dep in deps:
                notes.append(f"step {step['id']!r}: listed dependency {dep!r} once")
            else:
                deps.append(dep)
        step["depends_on"] = deps
    try:
        graphlib.TopologicalSorter({step["id"]: step["depends_on"] for step in fixed}).prepare()
    except graphlib.CycleError:
        check_steps(fixed)  # raises the cycle error with its message
    sinks = _sinks(fixed)
    if len(sinks) > 1:
        final, others = sinks[-1], sinks[:-1]
        final_step = next(step for step in fixed if step["id"] == final)
        final_step["depends_on"] = [*final_step["depends_on"], *others]
        notes.append(
            f"step {final!r} is the final step; it now also depends on the otherwise unused step(s) "
            f"{', '.join(map(repr, others))}"
        )
    check_steps(fixed)
    return fixed, notes


def _unique_ids(steps: Sequence[Mapping[str, Any]]) -> set[str]:
    """The plan's step ids; PlanError for an empty plan or an id used twice."""
    if not steps:
        raise PlanError("a plan needs at least one step")
    ids = [step["id"] for step in steps]
    duplicated = sorted(i for i, count in Counter(ids).items() if count > 1)
    if duplicated:
        raise PlanError(f"step id(s) {', '.join(map(repr, duplicated))} used by more than one step")
    return set(ids)


def _sinks(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    used = {dep for step in steps for dep in step["depends_on"]}
    return [step["id"] for step in steps if step["id"] not in used]
