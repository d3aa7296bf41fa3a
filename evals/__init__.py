"""Evaluation and the command line: measuring methods on datasets, and the `reso` CLI.

- Datasets (`reso.evals.datasets`: `Problem`, `load_dataset`) and benchmark synthesis (`reso.evals.synth`).
- Methods and the batch runner, at this level: `parse_method` (ReSo and its baselines, `methods.py`),
  `run_eval` (`runner.py`: resumable results, budgets per run, exactly-once learning through
  `reso.evals.ledger`) with an `EvalConfig` (`eval_config.py`), answering its questions here or on Ray
  workers (`reso.evals.backends`).
- Reports, comparisons and plots of finished runs (`reso.evals.reports`: `write_run_report`, `compare_runs`),
  and benchmarks (`reso.evals.bench`).
- The offline main job, `reso demo`, and what only it uses (`reso.evals.jobs`).
- The CLI (`reso.evals.cli`), which imports none of the above until a command needs it.

Public names are imported on first use, so `import reso.evals` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.evals.datasets import Problem, load_dataset
    from reso.evals.eval_config import EvalConfig
    from reso.evals.methods import Method, parse_method
    from reso.evals.reports.compare import compare_runs
    from reso.evals.reports.report import write_run_report
    from reso.evals.runner import run_eval

__all__ = [
    "EvalConfig",
    "Method",
    "Problem",
    "compare_runs",
    "load_dataset",
    "parse_method",
    "run_eval",
    "write_run_report",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "reports.compare": ["compare_runs"],
    "datasets": ["Problem", "load_dataset"],
    "methods": ["Method", "parse_method"],
    "reports.report": ["write_run_report"],
    "eval_config": ["EvalConfig"],
    "runner": ["run_eval"],
})
