"""What one evaluation run is: `EvalConfig` (dataset, method, output folder, settings, concurrency and budgets).

The runner (`runner.py`) runs it and the backends (`reso.evals.backends`) answer its questions; it sits below
both, so that neither has to import the other to name it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from reso.evals.methods import Method
from reso.graphs.settings import ReSoSettings

__all__ = ["EvalConfig"]


@dataclass
class EvalConfig:
    """What to run and where to write it."""

    dataset: str
    method: Method
    out: Path
    settings: ReSoSettings
    concurrency: int = 8
    limit: int | None = None
    budget_usd: float | None = None
    budget_tokens: int | None = None
    budget_seconds: float | None = None
    command: list[str] = field(default_factory=lambda: list(sys.argv))
