"""The prompt an agent receives for one subtask, and how agents read it back.

The engine writes every subtask prompt in this one layout so that any agent can find its parts: earlier
answers as `Answer[<id>] = <value>` lines (what the exact-arithmetic tool reads), then the current subtask
after a fixed marker (what replay agents match against their recordings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SUBTASK_MARKER = "Current subtask:"
CONTEXT_HEADER = "Earlier subtasks and their answers:"

_BINDING = re.compile(r"^Answer\[([^\]]+)\]\s*=\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ContextAnswer:
    """An earlier subtask as a later one sees it: its id, instruction, final value and full answer."""

    id: str
    instruction: str
    value: str | None
    answer_text: str = ""
    failed: bool = False


def render_subtask_prompt(instruction: str, context: Sequence[ContextAnswer] = (),
                          include_answer_text: bool = False) -> str:
    """The full user prompt for one subtask."""
    lines: list[str] = []
    if context:
        lines.append(CONTEXT_HEADER)
        for earlier in context:
            lines.append(f"[{earlier.id}] {earlier.instruction.strip()}")
            if include_answer_text and earlier.answer_text:
                lines.append(earlier.answer_text.strip())
            if earlier.failed or earlier.value is None:
                lines.append(f"Answer[{earlier.id}] is unknown: no agent produced a usable answer.")
            else:
                lines.append(f"Answer[{earlier.id}] = {earlier.value}")
            lines.append("")
    lines.append(SUBTASK_MARKER)
    lines.append(instruction.strip())
    return "\n".join(lines)


def current_subtask(prompt: str) -> str:
    """The current subtask's text: what follows the last marker, or the whole prompt without one."""
    _, marker, tail = prompt.rpartition(SUBTASK_MARKER)
    return tail.strip() if marker else prompt.strip()


def answer_bindings(prompt: str) -> dict[str, str]:
    """The `Answer[<id>] = <value>` lines of a prompt, as id → value text."""
    return {match.group(1).strip(): match.group(2) for match in _BINDING.finditer(prompt)}
