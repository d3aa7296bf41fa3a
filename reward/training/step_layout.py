"""Labelled answers rewritten in ProcessBench's layout, to measure a CRM on that layout with our own data.

ProcessBench gives a solution as a list of step texts ending in a boxed answer; the recordings give a JSON
object of reasoning and answer. The same labelled answers in both layouts show how much of a CRM's AUC
depends on the layout rather than on the answer (`reso crm eval` reads both). The working is cut into
paragraphs at line breaks and sentence ends (short pieces merged), and a last step states the final
answer as `\\boxed{…}`. Only final-answer labels are known, so a wrong answer's first wrong step is marked
at its last step: the AUC is meaningful, ProcessBench's step F1 is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from reso.reward.answer_features import unwrap
from reso.reward.labelled_records import LabelledRecord, question_key

_BREAKS = re.compile(r"\n+|(?<=[.!?])\s+(?=[A-Z$\\])")
MIN_STEP_CHARS = 160
UNNAMED = "unnamed"


def working_steps(working: str) -> list[str]:
    """The working as paragraphs: split at line breaks and sentence ends, pieces merged up to about
    `MIN_STEP_CHARS` characters."""
    steps: list[str] = []
    for piece in (part.strip() for part in _BREAKS.split(working)):
        if not piece:
            continue
        if steps and len(steps[-1]) < MIN_STEP_CHARS:
            steps[-1] = f"{steps[-1]} {piece}"
        else:
            steps.append(piece)
    return steps


def as_step_record(record: LabelledRecord, *, named: bool = True) -> dict[str, Any] | None:
    """One record in ProcessBench's layout (`problem`, `steps`, `label`, `generator`), or None when the
    answer has no working to cut into steps."""
    working, stated, _ = unwrap(record.answer)
    steps = working_steps(working)
    if stated is not None:
        steps.append(f"Therefore, the final answer is $\\boxed{{{stated.strip()}}}$.")
    if not steps:
        return None
    return {"id": question_key(record), "problem": record.instruction, "steps": steps,
            "label": -1 if record.label else len(steps) - 1,
            "generator": (record.model or record.agent_id or UNNAMED) if named else UNNAMED}


def as_step_records(records: Iterable[LabelledRecord], *, named: bool = True) -> list[dict[str, Any]]:
    """Every record that has working, in ProcessBench's layout (see `as_step_record`)."""
    return [row for row in (as_step_record(record, named=named) for record in records) if row is not None]
