"""A question's task DAG as a Mermaid flowchart: the plan as a picture in the graph's state (`plan_mermaid`).

Studio shows the state's values as text, and any Mermaid viewer (GitHub, mermaid.live, most Markdown
editors) draws the text as the plan. One box per subtask, named like the task-DAG graph's node
(`step_<id>`, see `reso.graphs.compile.node_name`), labelled with the step's id and its instruction
shortened; an arrow from each dependency to its dependant. Once the subtasks have run, each label also
says which agent's answer was kept and its value (or that the step failed).

Written here rather than with langchain_core's `draw_mermaid`: that one neither quotes nor escapes a node's
name and splits it at every colon, so an instruction ("Step A: how many (red) apples?") breaks it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from reso.graphs.dag import TaskDAG
from reso.graphs.run_records import StepRecord, StepStatus

INSTRUCTION_CHARS = 48
"""Characters of an instruction kept in its box (whitespace collapsed), the rest cut with an ellipsis."""
VALUE_CHARS = 24
"""Characters of a kept value shown in its box."""

# Characters that end a quoted label or that Mermaid reads as markup inside one, as its entity codes
# ("#35;" first, so that the codes' own '#' are not escaped again).
_ESCAPES = {"#": "#35;", '"': "#quot;", "[": "#91;", "]": "#93;", "(": "#40;", ")": "#41;", "{": "#123;",
            "}": "#125;", "<": "#60;", ">": "#62;", "|": "#124;", "`": "#96;"}
_ESCAPE = re.compile("|".join(map(re.escape, _ESCAPES)))
_PLAIN_ID = re.compile(r"[A-Za-z0-9_]+")


def escape_label(text: str) -> str:
    """`text` safe inside a double-quoted Mermaid label."""
    return _ESCAPE.sub(lambda match: _ESCAPES[match.group()], text)


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def mermaid_ids(dag: TaskDAG) -> dict[str, str]:
    """Step id → Mermaid node id: `step_<id>` like the graph's nodes, or `step<position>` for every step
    when some id has characters a Mermaid id cannot hold (keeping the ids distinct)."""
    if all(_PLAIN_ID.fullmatch(step_id) for step_id in dag.ids):
        return {step_id: f"step_{step_id}" for step_id in dag.ids}
    return {step_id: f"step{position}" for position, step_id in enumerate(dag.ids)}


def _outcome(record: StepRecord) -> str:
    if record.status != StepStatus.DONE or record.value is None:
        return str(record.status) if record.status != StepStatus.DONE else "no value"
    return f"{record.agent or '?'} → {shorten(record.value, VALUE_CHARS)}"


def dag_mermaid(dag: TaskDAG, steps: Mapping[str, StepRecord] | None = None) -> str:
    """The Mermaid flowchart of `dag`; with `steps` (records by id), each finished box names its outcome."""
    ids = mermaid_ids(dag)
    lines = ["flowchart TD"]
    for node in dag.nodes:
        label = escape_label(f"{node.id}: {shorten(node.instruction, INSTRUCTION_CHARS)}")
        record = (steps or {}).get(node.id)
        if record is not None:
            label += "<br/>" + escape_label(_outcome(record))
        lines.append(f'    {ids[node.id]}["{label}"]')
    lines.extend(f"    {ids[parent]} --> {ids[node.id]}" for node in dag.nodes for parent in node.depends_on)
    return "\n".join(lines) + "\n"
