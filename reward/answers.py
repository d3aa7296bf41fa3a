"""Answer checking in one import: extraction (`reward.extract`) and equivalence (`reward.equivalence`).

`check_answer(text, reference)` is what the rule scorer and the training labels use: find the final
answer in free text, then compare it with the reference by value (1 % relative tolerance by default) or
symbolically through math-verify.
"""

from __future__ import annotations

from reso.reward.equivalence import answers_match, check_answer, numbers_close, to_number
from reso.reward.extract import cut_follow_on, extract_answer, normalize_answer

__all__ = [
    "answers_match",
    "check_answer",
    "cut_follow_on",
    "extract_answer",
    "normalize_answer",
    "numbers_close",
    "to_number",
]
