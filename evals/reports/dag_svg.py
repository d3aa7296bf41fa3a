"""An item's task DAG as inline SVG for the HTML report: a layered layout, left to right, drawn by hand so
the page needs no script, stylesheet or font from anywhere (it must work offline).

A step's layer is the length of the longest chain of dependencies leading to it; steps of one layer stack
top to bottom in plan order. Each step is a box with its id and chosen agent, coloured by whether its value
was right (`ok`), wrong (`bad`) or not judged (`unk`); arrows run from a dependency to its dependant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from reso.graphs.run_records import StepStatus

NODE_W, NODE_H, GAP_X, GAP_Y, PAD = 180, 40, 46, 14, 6
MAX_AGENT_CHARS = 28
# The arrowhead every DAG refers to: put once on the page (ids are page-wide in HTML).
ARROW_DEFS = ('<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
              '<marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
              'orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs></svg>')


def layers(steps: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Step id → layer (0 for steps with no known dependency); unknown ids and cycles are ignored."""
    needs = {str(step["id"]): [str(d) for d in step["depends_on"]] for step in steps}
    layer: dict[str, int] = {}

    def depth(step_id: str, visiting: frozenset[str]) -> int:
        if step_id in layer:
            return layer[step_id]
        parents = [p for p in needs.get(step_id, []) if p in needs and p not in visiting]
        layer[step_id] = 1 + max((depth(p, visiting | {step_id}) for p in parents), default=-1)
        return layer[step_id]

    for step_id in needs:
        depth(step_id, frozenset())
    return layer


def _state(step: Mapping[str, Any]) -> str:
    if step.get("correct") is True:
        return "ok"
    if step.get("correct") is False or step.get("status") not in (None, StepStatus.DONE):
        return "bad"
    return "unk"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dag_svg(steps: Sequence[Mapping[str, Any]]) -> str:
    """The inline `<svg>` of one item's steps (empty string when there are none)."""
    if not steps:
        return ""
    layer = layers(steps)
    columns: dict[int, list[str]] = {}
    for step in steps:
        columns.setdefault(layer[str(step["id"])], []).append(str(step["id"]))
    where = {step_id: (PAD + col * (NODE_W + GAP_X), PAD + row * (NODE_H + GAP_Y))
             for col, ids in columns.items() for row, step_id in enumerate(ids)}
    width = PAD * 2 + len(columns) * NODE_W + (len(columns) - 1) * GAP_X
    height = PAD * 2 + max(len(ids) for ids in columns.values()) * (NODE_H + GAP_Y) - GAP_Y
    parts = [f'<svg class="dag" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="task DAG">']
    for step in steps:
        x2, y2 = where[str(step["id"])]
        for parent in step["depends_on"]:
            if str(parent) not in where:
                continue
            x1, y1 = where[str(parent)]
            parts.append(f'<line x1="{x1 + NODE_W}" y1="{y1 + NODE_H // 2}" x2="{x2}" y2="{y2 + NODE_H // 2}" '
                         f'marker-end="url(#arrow)"/>')
    for step in steps:
        step_id = str(step["id"])
        x, y = where[step_id]
        agent = str(step.get("agent") or "(none)")
        parts.append(
            f'<g class="step {_state(step)}" data-step="{escape(step_id)}">'
            f'<title>{escape(step_id)}: {escape(agent)} → {escape(str(step.get("value")))}</title>'
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="5"/>'
            f'<text x="{x + 8}" y="{y + 16}" class="sid">{escape(_clip(step_id, MAX_AGENT_CHARS))}</text>'
            f'<text x="{x + 8}" y="{y + 32}">{escape(_clip(agent, MAX_AGENT_CHARS))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)
