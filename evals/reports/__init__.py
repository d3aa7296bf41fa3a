"""What finished runs show: a report per run and per sweep (`report.py`, markdown with plots, and
`html_report.py`, one offline HTML page with every item's DAG from `dag_svg.py`), comparisons of runs on
the items they share (`compare.py`), their intervals (`stats.py`; `shared_questions.py` for composites that
share source questions), plots (`plots.py`, and the accuracy–cost picture `cost_plot.py`) and the labels
that tell runs apart (`run_labels.py`), and how an interval or a command reads in either report (`formatting.py`).

Public names are imported on first use, so importing the package loads neither numpy nor matplotlib.
The functions `dag_svg` and `run_labels` are not exported here: their modules bear the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.evals.reports.compare import CompareError, Comparison, Run, RunStats, compare_runs, load_run
    from reso.evals.reports.cost_plot import CostPoint, plot_accuracy_cost
    from reso.evals.reports.html_report import render_run_html, write_run_html
    from reso.evals.reports.report import write_run_report, write_sweep_report
    from reso.evals.reports.run_labels import method_label
    from reso.evals.reports.stats import PairedInterval, paired_bootstrap, wilson_interval

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

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "report": ["write_run_report", "write_sweep_report"],
    "html_report": ["render_run_html", "write_run_html"],
    "compare": ["CompareError", "Comparison", "Run", "RunStats", "compare_runs", "load_run"],
    "stats": ["PairedInterval", "paired_bootstrap", "wilson_interval"],
    "cost_plot": ["CostPoint", "plot_accuracy_cost"],
    "run_labels": ["method_label"],
})
