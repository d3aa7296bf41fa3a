"""Benchmark synthesis: composite questions whose sub-questions are linked through a random DAG, in the
ReSo release's item format. The paper's algorithm over a pool of marked questions (`mas.py`, `reso synth
mas`), the same over any file of plain questions whose replaceable constant is chosen automatically
(`questions.py` with `constants.py`, `reso synth mas --questions`), and GSM8K-MAS from recorded GSM8K
questions kept verbatim (`gsm8k.py`, `reso synth gsm8k`).

Public names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.evals.synth.constants import Constant, choose_constant
    from reso.evals.synth.gsm8k import build_gsm8k_mas, read_replay_questions
    from reso.evals.synth.mas import PoolQuestion, read_pool, synthesize_mas
    from reso.evals.synth.questions import build_linked_mas, read_questions

__all__ = [
    "Constant",
    "PoolQuestion",
    "build_gsm8k_mas",
    "build_linked_mas",
    "choose_constant",
    "read_pool",
    "read_questions",
    "read_replay_questions",
    "synthesize_mas",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "mas": ["PoolQuestion", "read_pool", "synthesize_mas"],
    "questions": ["build_linked_mas", "read_questions"],
    "gsm8k": ["build_gsm8k_mas", "read_replay_questions"],
    "constants": ["Constant", "choose_constant"],
})
