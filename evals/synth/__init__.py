"""Benchmark synthesis: composite questions whose sub-questions are linked through a random DAG, in the
ReSo release's item format. The paper's algorithm over a pool of marked questions (`mas.py`, `reso synth
mas`), the same over any file of plain questions whose replaceable constant is chosen automatically
(`questions.py` with `constants.py`, `reso synth mas --questions`), and GSM8K-MAS from recorded GSM8K
questions kept verbatim (`gsm8k.py`, `reso synth gsm8k`).

Public names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.evals.synth.constants import Constant, choose_constant
    from reso.evals.synth.gsm8k import build_gsm8k_mas, read_replay_questions
    from reso.evals.synth.mas import PoolQuestion, read_pool, synthesize_mas
    from reso.evals.synth.questions import build_linked_mas, read_questions

_EXPORTS: dict[str, str] = {
    "PoolQuestion": "reso.evals.synth.mas",
    "read_pool": "reso.evals.synth.mas",
    "synthesize_mas": "reso.evals.synth.mas",
    "build_linked_mas": "reso.evals.synth.questions",
    "read_questions": "reso.evals.synth.questions",
    "build_gsm8k_mas": "reso.evals.synth.gsm8k",
    "read_replay_questions": "reso.evals.synth.gsm8k",
    "Constant": "reso.evals.synth.constants",
    "choose_constant": "reso.evals.synth.constants",
}

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
