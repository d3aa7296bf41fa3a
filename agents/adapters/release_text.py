"""The two spellings of the ReSo benchmark release that agents must read back: the "The answer is recorded
as Answer[<i>]" suffix of every sub-question, and the linked constant `UNK_<i>(a constant calculated by
adding the sum of Answer[1, 4] to the number (-218.00). )` that stands for a value computed from earlier
answers.

They live here, in the lowest layer, because replay agents need them and agents import nothing from
`reso.evals`; `reso.evals.datasets.release_format` re-exports them beside the release's other spellings.
"""

from __future__ import annotations

import re

RECORDED_RE = re.compile(r"\.?\s*The answer is recorded as Answer\[(\d+)\]\.?\s*$")
LINKED_CONSTANT_RE = re.compile(
    r"UNK_(?P<node>\d+)\(a constant calculated by adding the sum of Answer\[(?P<parents>[\d,\s]+)\]"
    r" to the number \((?P<adj>[-+]?[\d.]+(?:[eE][-+]?\d+)?)\)\. \)"
)


def split_recorded(text: str) -> tuple[str, str | None]:
    """A step's text without its "The answer is recorded as Answer[i]" suffix (and that sentence's full stop, which
    a question written on one line has), and i (None if absent)."""
    match = RECORDED_RE.search(text)
    if match is None:
        return text.rstrip(), None
    return text[: match.start()], match.group(1)
