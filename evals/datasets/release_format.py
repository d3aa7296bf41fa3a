"""The text conventions of the ReSo benchmark release (MATH-MAS, SciBench-MAS), in one place.

The loader, the synthesiser and the validator all read or write these spellings: the linked constant
`UNK_<i>(a constant calculated by adding the sum of Answer[1, 4] to the number (-218.00). )`, the
"The answer is recorded as Answer[<i>]" suffix of every sub-question, the integration step
"Please calculate the value of Answer[0]*Answer[1]*…", and `gt_plan` as a Python-list literal string.
"""

from __future__ import annotations

import ast
import re

# Replay agents read these two spellings back too; they live in the agents layer and are re-exported here.
from reso.agents.adapters.release_text import LINKED_CONSTANT_RE, RECORDED_RE, split_recorded  # noqa: F401
from reso.evals.datasets.numeric import parse_number

PREAMBLE = "The following is a complex question composed of multiple sub-questions:\n\n"
INTEGRATION_HEADER = "Please use the answers to the above questions to perform the following calculations:\n"

ANSWER_REF_RE = re.compile(r"Answer\[(\d+(?:\s*,\s*\d+)*)\]")
# Sub-question pools mark their replaceable constant as "UNK(a constant)" (SciBench) or
# "UNK(a constant can be caculuted by other answers)" (MATH, spelling as released).
POOL_MARKER_RE = re.compile(r"UNK\([^()]*\)")


def recorded_suffix(node: str | int) -> str:
    """What the release appends to a sub-question: ". The answer is recorded as Answer[<node>]"."""
    return f". The answer is recorded as Answer[{node}]"


def linked_constant(node: str | int, parents: list[int], adj: str) -> str:
    """The text that replaces a child's marked constant: "UNK_<node>(<edge description>)"."""
    return f"UNK_{node}({edge_description(parents, adj)})"


def edge_description(parents: list[int], adj: str) -> str:
    """The release's `edge_descriptions` entry for a linked node (`Answer[1, 4]` for several parents)."""
    return f"a constant calculated by adding the sum of Answer[{', '.join(map(str, parents))}] to the number ({adj}). "


def final_instruction(n: int, *, units_note: bool = False) -> str:
    """The integration step: the product of all n sub-answers."""
    product = "*".join(f"Answer[{i}]" for i in range(n))
    note = "(They are numerical values and do not include units)" if units_note else ""
    return (f"Please calculate the value of {product}{note}. "
            "Conclude the answer by stating 'The answer is therefore \\boxed{[ANSWER]}.'")


def node_text(info: dict) -> str:
    """A node's sub-question as it appears in the composite text (MATH: `problem_UNK`, SciBench:
    `problem_text_UNK`)."""
    for key in ("problem_UNK", "problem_text_UNK"):
        if isinstance(info.get(key), str):
            return info[key]
    raise KeyError("problem_UNK")


def question_value(info: dict) -> float:
    """A node's original constant: `question_vals` is a number for roots and a one-element list for
    linked nodes in the release."""
    return parse_number(info["question_vals"])


def parse_plan(gt_plan: object) -> list[str]:
    """The per-step texts of `gt_plan` (a Python-list literal string in the release; a list is accepted).

    Raises:
        ValueError: When it is not a list of strings.
    """
    steps = ast.literal_eval(gt_plan) if isinstance(gt_plan, str) else gt_plan
    if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
        raise ValueError("expected a list of strings")
    return steps


def answer_refs(text: str) -> list[str]:
    """The node ids a text refers to through `Answer[i]` or `Answer[i, j]`, in order, without repeats."""
    seen: list[str] = []
    for match in ANSWER_REF_RE.finditer(text):
        for part in match.group(1).split(","):
            node = part.strip()
            if node not in seen:
                seen.append(node)
    return seen
