"""Evaluation and the command line: measuring methods on datasets, and the `reso` CLI.

- Datasets (`reso.evals.datasets`: `Problem`, `load_dataset`) and benchmark synthesis (`reso.evals.synth`).
- Methods and the batch runner, at this level: `parse_method` (ReSo and its baselines, `methods.py`),
  `run_eval` with an `EvalConfig` (`runner.py`: resumable results, budgets per run, exactly-once learning
  through `reso.evals.ledger`), answering its questions here or on Ray workers (`reso.evals.backends`).
- Reports, comparisons and plots of finished runs (`reso.evals.reports`: `write_run_report`, `compare_runs`),
  and benchmarks (`reso.evals.bench`).
- The CLI (`reso.evals.cli`), which imports none of the above until a command needs it.

Public names are imported on first use, so `import reso.evals` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.evals.datasets import Problem, load_dataset
    from reso.evals.methods import Method, parse_method
    from reso.evals.reports.compare import compare_runs
    from reso.evals.reports.report import write_run_report
    from reso.evals.runner import EvalConfig, run_eval

_EXPORTS: dict[str, str] = {
    "compare_runs": "reso.evals.reports.compare",
    "Problem": "reso.evals.datasets",
    "load_dataset": "reso.evals.datasets",
    "Method": "reso.evals.methods",
    "parse_method": "reso.evals.methods",
    "write_run_report": "reso.evals.reports.report",
    "EvalConfig": "reso.evals.runner",
    "run_eval": "reso.evals.runner",
}

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
