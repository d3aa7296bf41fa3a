"""What one evaluation run is: `EvalConfig` (dataset, method, output folder, settings, and `RunOptions`: how many
questions at once and the run's budgets, the `run` section of `reso eval`'s settings).

The runner (`runner.py`) runs it and the backends (`reso.evals.backends`) answer its questions; it sits below
both, so that neither has to import the other to name it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from reso.evals.methods import Method
from reso.evals.run_options import RunOptions
from reso.graphs.settings import ReSoSettings

__all__ = ["EvalConfig", "RunOptions"]


@dataclass
class EvalConfig:
    """What to run and where to write it."""

    dataset: str
    method: Method
    out: Path
    settings: ReSoSettings
    run: RunOptions = field(default_factory=RunOptions)
    command: list[str] = field(default_factory=lambda: list(sys.argv))
