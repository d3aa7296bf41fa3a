"""The reward layer: reading answers and judging them.

- Answers: `extract_answer` and `check_answer` (a final answer against a reference, numerically or
  symbolically).
- Scorers (the CRM): every scorer implements `Scorer` (`score(items) -> [0, 1]`, `ScoreItem` in, `Score`
  out); `build_scorer` makes one from a spec (the ground-truth rule, consensus, the reliability-weighted
  vote, an LLM judge, a process reward model, the small trained CRM, blends of them).
- Labelled records, the CRMs' training and evaluation data (`reso.reward.labelled_records`); fitting, evaluating and
  searching CRMs is in the subpackage `reso.reward.training`, which no runtime module imports.

Public names are imported on first use, so `import reso.reward` loads no model library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.reward.answers import check_answer, extract_answer
    from reso.reward.base import Score, ScoreItem, Scorer
    from reso.reward.registry import build_scorer

__all__ = [
    "Score",
    "ScoreItem",
    "Scorer",
    "build_scorer",
    "check_answer",
    "extract_answer",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "answers": ["check_answer", "extract_answer"],
    "base": ["Score", "ScoreItem", "Scorer"],
    "registry": ["build_scorer"],
})
