"""The text format of the ReSo MAS benchmarks (MATH-MAS, SciBench-MAS), read back into plan steps.

A composite question is a header line, then sub-question blocks, each ending with the sentence
"The answer is recorded as Answer[i]" (its full stop, if any, included), then a final step ("Please calculate the value of
Answer[0]*Answer[1]*..."). A block depends on every answer it mentions, written either one at a time
(`Answer[3]`) or as a list (`the sum of Answer[1, 4]`). Blocks can span several lines and may appear in any
order (index order in `problem_text`, topological order in `problem_text_sort`).
"""

from __future__ import annotations

import re
from typing import Any

from reso.graphs.dag import FINAL_ID, PlanError

HEADER = "The following is a complex question composed of multiple sub-questions:"
FINAL_INTRO = "Please use the answers to the above questions to perform the following calculations:"
FINAL_LEAD = "Please calculate"

# The sentence's own full stop, when it has one (a question written on one line: "… as Answer[1]. A carton …"),
# ends the block it closes rather than opening the next.
_RECORDED = re.compile(r"The answer is recorded as Answer\[\s*(\w+)\s*\]\.?")
_REFERENCE = re.compile(r"Answer\[\s*(\w+(?:\s*,\s*\w+)*)\s*\]")


def answer_references(text: str) -> list[str]:
    """The answer ids a text mentions, in first-mention order, each once (`Answer[1, 4]` gives two)."""
    found: list[str] = []
    for match in _REFERENCE.finditer(text):
        for ref in match.group(1).split(","):
            ref = ref.strip()
            if ref not in found:
                found.append(ref)
    return found


def looks_structural(question: str) -> bool:
    """Whether a question is written in the MAS format: recorded answers followed by a final step."""
    markers = list(_RECORDED.finditer(question))
    return bool(markers) and bool(answer_references(question[markers[-1].end():]))


def parse_mas_steps(text: str) -> list[dict[str, Any]]:
    """Reads a MAS-format question into plan steps, in the order the text gives them.

    Each sub-question becomes a step with its answer index as id, its block text (ending with "The answer
    is recorded as Answer[i]") as instruction and the answers it mentions as dependencies; the final step
    gets the id `final`, the "Please calculate ..." text as instruction and every answer it mentions as
    dependencies. The steps are not validated here.

    Raises:
        PlanError: The text has no recorded answer or no final step that uses the answers.
    """
    markers = list(_RECORDED.finditer(text))
    if not markers:
        raise PlanError(
            "the question is not in the MAS benchmark format: no sub-question ends with "
            "'The answer is recorded as Answer[i]'"
        )
    steps: list[dict[str, Any]] = []
    start = 0
    for position, marker in enumerate(markers):
        body = text[start:marker.start()]
        if position == 0:
            _, header, after = body.partition(HEADER)
            body = after if header else body
        own = marker.group(1)
        instruction = (body + marker.group(0)).strip()
        steps.append({"id": own, "instruction": instruction, "depends_on": answer_references(body)})
        start = marker.end()
    tail = text[start:]
    final_deps = answer_references(tail)
    if not final_deps:
        raise PlanError(f"no final step after sub-question {markers[-1].group(1)!r} uses the answers")
    lead = tail.find(FINAL_LEAD)
    final_text = tail[lead:] if lead >= 0 else tail.replace(FINAL_INTRO, "")
    steps.append({"id": FINAL_ID, "instruction": final_text.strip(), "depends_on": final_deps})
    return steps
