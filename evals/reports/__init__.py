"""What finished runs show: a report per run and per sweep (`report.py`, markdown with plots, and
`html_report.py`, one offline HTML page with every item's DAG from `dag_svg.py`), comparisons of runs on
the items they share (`compare.py`), their intervals (`stats.py`), plots (`plots.py`) and the labels
that tell runs apart (`run_labels.py`).

Public names are imported on first use, so importing the package loads neither numpy nor matplotlib.
The functions `dag_svg` and `run_labels` are not exported here: their modules bear the same names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.evals.reports.compare import CompareError, Comparison, Run, RunStats, compare_runs, load_run
    from reso.evals.reports.html_report import render_run_html, write_run_html
    from reso.evals.reports.plots import CostPoint, plot_accuracy_cost
    from reso.evals.reports.report import write_run_report, write_sweep_report
    from reso.evals.reports.run_labels import method_label
    from reso.evals.reports.stats import PairedInterval, paired_bootstrap, wilson_interval

_EXPORTS: dict[str, str] = {
    "write_run_report": "reso.evals.reports.report",
    "write_sweep_report": "reso.evals.reports.report",
    "render_run_html": "reso.evals.reports.html_report",
    "write_run_html": "reso.evals.reports.html_report",
    "CompareError": "reso.evals.reports.compare",
    "Comparison": "reso.evals.reports.compare",
    "Run": "reso.evals.reports.compare",
    "RunStats": "reso.evals.reports.compare",
    "compare_runs": "reso.evals.reports.compare",
    "load_run": "reso.evals.reports.compare",
    "PairedInterval": "reso.evals.reports.stats",
    "paired_bootstrap": "reso.evals.reports.stats",
    "wilson_interval": "reso.evals.reports.stats",
    "CostPoint": "reso.evals.reports.plots",
    "plot_accuracy_cost": "reso.evals.reports.plots",
    "method_label": "reso.evals.reports.run_labels",
}

__all__ = [
    "CompareError",
    "Comparison",
    "CostPoint",
    "PairedInterval",
    "Run",
    "RunStats",
    "compare_runs",
    "load_run",
    "method_label",
    "paired_bootstrap",
    "plot_accuracy_cost",
    "render_run_html",
    "wilson_interval",
    "write_run_html",
    "write_run_report",
    "write_sweep_report",
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
