"""The reward layer: reading answers and judging them.

- Answers: `extract_answer` and `check_answer` (a final answer against a reference, numerically or
  symbolically).
- Scorers (the CRM): every scorer implements `Scorer` (`score(items) -> [0, 1]`, `ScoreItem` in, `Score`
  out); `build_scorer` makes one from a spec (the ground-truth rule, consensus, the reliability-weighted
  vote, an LLM judge, a process reward model, the small trained CRM, blends of them).
- Training and evaluating CRMs on labelled records (`reso.reward.records`, `reso.reward.crm_eval`).

Public names are imported on first use, so `import reso.reward` loads no model library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.reward.answers import check_answer, extract_answer
    from reso.reward.base import Score, ScoreItem, Scorer
    from reso.reward.registry import build_scorer

_EXPORTS: dict[str, str] = {
    "check_answer": "reso.reward.answers",
    "extract_answer": "reso.reward.answers",
    "Score": "reso.reward.base",
    "ScoreItem": "reso.reward.base",
    "Scorer": "reso.reward.base",
    "build_scorer": "reso.reward.registry",
}

__all__ = [
    "Score",
    "ScoreItem",
    "Scorer",
    "build_scorer",
    "check_answer",
    "extract_answer",
]

def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562), so importing the package loads none of its heavy dependencies.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
