"""`reso compare`: finished runs side by side on the items they share, with intervals: each run's accuracy
(Wilson), and against a reference run the paired bootstrap intervals of the accuracy difference and the
cost ratio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from reso.evals.cli.errors import fail

if TYPE_CHECKING:
    from reso.evals.reports.compare import Comparison


def _interval(interval: list[float] | None, unit: str) -> str:
    if not interval:
        return ""
    low, high = interval
    if unit == "pt":
        return f" ({low * 100:+.1f} to {high * 100:+.1f})"
    if unit == "%":
        return f" ({low:.1%} – {high:.1%})"
    return f" ({low:.2f}–{high:.2f})"


def compare_command(
    dirs: Annotated[list[Path], typer.Argument(help="Output folders of `reso eval` runs.", show_default=False)],
    reference: Annotated[Optional[Path], typer.Option(
        help="The run the others are measured against; default the first DIR.")] = None,
    out: Annotated[Optional[Path], typer.Option(
        help="Write comparison.json and accuracy_vs_cost.png into this folder.")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples of the shared items.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")] = 0,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
) -> None:
    """Compare runs on their shared items: accuracy with 95 % intervals, cost, tokens, and paired bootstrap
    intervals of each run's accuracy difference and cost ratio against the reference."""
    from reso.evals.reports.compare import CompareError, compare_runs, load_run

    if resamples < 1:
        fail(f"--resamples must be >= 1, got {resamples}")
    if out is not None and out.exists() and not out.is_dir():
        fail(f"--out {out}: not a folder")
    folders = list(dict.fromkeys(dirs))
    if reference is not None and reference.resolve() not in [folder.resolve() for folder in folders]:
        folders.insert(0, reference)
    index = 0 if reference is None else [f.resolve() for f in folders].index(reference.resolve())
    try:
        comparison = compare_runs([load_run(folder) for folder in folders], index, resamples=resamples, seed=seed)
    except CompareError as error:
        fail(str(error))
    report = comparison.to_json()
    if out is not None:
        report["files"] = _write(out, comparison, report)
    if json_output:
        typer.echo(json.dumps(report))
        return
    _print_table(comparison)
    for path in report.get("files", []):
        typer.echo(f"wrote {path}")


def _write(out: Path, comparison: Comparison, report: dict) -> list[str]:
    from reso.evals.reports.plots import CostPoint, plot_accuracy_cost

    out.mkdir(parents=True, exist_ok=True)
    points = [CostPoint(run.label, run.kind, run.cost_per_item_usd, run.accuracy, run.accuracy_ci95)
              for run in comparison.runs]
    plot = out / "accuracy_vs_cost.png"
    plot_accuracy_cost(points, plot, title=f"Accuracy against cost ({comparison.shared_items} shared items)")
    data = out / "comparison.json"
    files = [str(data), str(plot)]
    data.write_text(json.dumps({**report, "files": files}, indent=2), encoding="utf-8")
    return files


def _print_table(comparison: Comparison) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    reference = Path(comparison.reference).name
    table = Table(title=f"{comparison.shared_items} items shared by all {len(comparison.runs)} runs; paired "
                        f"bootstrap against {escape(reference)} ({comparison.resamples} resamples, seed {comparison.seed})")
    for column in ("run", "method", "items (in run)", "accuracy (95 % interval)", "USD", "tokens",
                   "Δ accuracy, pt (95 %)", "cost ratio (95 %)"):
        table.add_column(column)
    for run in comparison.runs:
        pair = run.vs_reference
        assert pair is not None  # compare_runs pairs every run with the reference
        ratio = f"{pair.cost_ratio:.2f}×{_interval(pair.cost_ratio_ci95, '×')}" if pair.cost_ratio is not None else "-"
        table.add_row(escape(Path(run.folder).name), escape(run.label), f"{run.n} ({run.items_in_run})",
                      f"{run.accuracy:.1%}{_interval(run.accuracy_ci95, '%')}", f"{run.cost_usd:.4f}",
                      f"{run.total_tokens:,}",
                      f"{pair.accuracy_diff * 100:+.1f}{_interval(pair.accuracy_diff_ci95, 'pt')}", ratio)
    Console().print(table)
