"""`reso compare`: finished runs side by side on the items they share, with intervals: each run's accuracy,
and against a reference run the paired intervals of the accuracy difference and the cost ratio, from the
bootstrap item by item or, for composites that share source questions, from the cluster-robust variance by
source question (the caption says which)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from reso.evals.cli.errors import fail
from reso.evals.cli.options import NOTHING_WRITTEN
from reso.evals.cli.paths import out_folder

if TYPE_CHECKING:
    from rich.table import Table

    from reso.evals.reports.compare import Comparison


def compare_command(
    dirs: Annotated[list[Path], typer.Argument(help="Output folders of `reso eval` runs.", show_default=False)],
    reference: Annotated[Optional[Path], typer.Option(
        help="The run the others are measured against; default the first DIR.")] = None,
    out: Annotated[Optional[Path], typer.Option(
        help="Write comparison.json and accuracy_vs_cost.png into this folder.", show_default=NOTHING_WRITTEN)] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples of the shared items (unused where they share source questions).")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")] = 0,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
) -> None:
    """Compare runs on their shared items: accuracy with 95 % intervals, cost, tokens, and paired intervals
    of each run's accuracy difference and cost ratio against the reference (the bootstrap, or cluster-robust
    where composites share source questions)."""
    from reso.evals.reports.compare import CompareError, compare_runs, load_run

    if resamples < 1:
        fail(f"--resamples must be >= 1, got {resamples}")
    out_folder("--out", out)
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
    from reso.evals.reports.cost_plot import CostPoint, plot_accuracy_cost

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

    console = Console()
    console.print(comparison_table(comparison, width=console.width))


def _figures(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """The figures' column headers and, per run, its cells: each figure over its interval."""
    # Items in a run beyond those shared are worth a column only where some run has them.
    partial = any(run.items_in_run != run.n for run in comparison.runs)
    headers = [*(["items (in run)"] if partial else []), "accuracy", "Δ pt", "cost ratio", "USD\ntokens"]
    rows = []
    for run in comparison.runs:
        pair = run.vs_reference
        assert pair is not None  # compare_runs pairs every run with the reference
        accuracy = run.accuracy_ci95 or [run.accuracy, run.accuracy]
        diff, ratio_ci = pair.accuracy_diff_ci95, pair.cost_ratio_ci95
        ratio = "-" if pair.cost_ratio is None else f"{pair.cost_ratio:.2f}×" + (
            f"\n{ratio_ci[0]:.2f}–{ratio_ci[1]:.2f}" if ratio_ci else "")
        rows.append([*([f"{run.n}\n({run.items_in_run})"] if partial else []),
                     f"{run.accuracy:.1%}\n{accuracy[0] * 100:.1f}–{accuracy[1]:.1%}",
                     f"{pair.accuracy_diff * 100:+.1f}" + (f"\n{diff[0] * 100:+.1f} to {diff[1] * 100:+.1f}" if diff else ""),
                     ratio, f"{run.cost_usd:.4f}\n{run.total_tokens:,}"])
    return headers, rows


def intervals_caption(comparison: Comparison) -> str:
    """Which 95 % intervals the table shows, and how they were computed."""
    from reso.evals.reports.clusters import CLUSTER_METHOD

    reference = Path(comparison.reference).name
    figures = "for the difference in points (Δ) and the cost ratio"
    if comparison.interval_method == CLUSTER_METHOD:
        return (f"95 % intervals below the figures: {CLUSTER_METHOD}: {comparison.source_questions} source "
                "questions, composites that share one move together; normal, ±1.96 standard errors, for the "
                f"accuracy and, paired, against {reference} {figures}")
    return (f"95 % intervals below the figures: Wilson for the accuracy; paired {comparison.interval_method} "
            f"against {reference} ({comparison.resamples} resamples, seed {comparison.seed}) {figures}")


def comparison_table(comparison: Comparison, width: int | None = None) -> Table:
    """The comparison as a rich table for a terminal `width` columns wide: each figure over its interval, the
    run's folder under its method. The method column wraps between model names and is never narrower than
    the longest one, so at 80 columns every model's name stays whole (the figures wrap instead)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from reso.evals.reports.run_labels import breakable

    table = Table(title=f"{comparison.shared_items} items shared by all {len(comparison.runs)} runs",
                  caption=escape(intervals_caption(comparison)), box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False)
    labels = [breakable(run.label) for run in comparison.runs]
    folders = [Path(run.folder).name for run in comparison.runs]
    headers, rows = _figures(comparison)
    longest = max((len(word) for label in labels for word in label.split()), default=6)
    fixed = None
    if width is not None:  # what the figures leave, but never less than the longest name
        figures = sum(max(len(line) for cell in [header, *(row[i] for row in rows)] for line in cell.split("\n"))
                      for i, header in enumerate(headers))
        natural = max(len(text) for text in [*labels, *folders, "method (run)"])
        # Each figure's column is set off by a divider and a space of padding either side.
        fixed = max(longest, min(natural, width - figures - 3 * len(headers)))
    table.add_column("method (run)", width=fixed, min_width=longest, overflow="fold")
    for header in headers:
        table.add_column(header, justify="right")  # an interval wraps at its "to" where it must
    for label, folder, cells in zip(labels, folders, rows, strict=True):
        table.add_row(f"{escape(label)}\n[dim]{escape(folder)}[/dim]", *cells)
    return table
