"""`reso frontier`: ReSo's accuracy–cost hull against the single models' hull, over any finished runs.

Runs of `reso eval` (or a `reso demo` benchmark's test runs) on one dataset: ReSo's hull is made of the `reso`
runs along the budget knob (the largest group that differ in `--answer-value` alone: a sweep of it, say;
other ReSo runs are points beside it), the single models' hull of every `single:` run; votes, cascades and
the oracle are shown beside them. The figures and their intervals are
`reso.evals.reports.frontier`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from reso.evals.cli.errors import fail
from reso.evals.cli.options import NOTHING_WRITTEN
from reso.evals.cli.paths import out_folder

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from reso.evals.reports.frontier import Frontier


def frontier_command(
    dirs: Annotated[list[Path], typer.Argument(
        help="Output folders of `reso eval` runs on one dataset (a benchmark folder of `reso demo`: its "
             "test-* folders).", show_default=False)],
    out: Annotated[Optional[Path], typer.Option(
        help="Write frontier.json and frontier.png into this folder.", show_default=NOTHING_WRITTEN)] = None,
    versus: Annotated[Optional[list[Path]], typer.Option(
        help="Another router's runs on the same items (a benchmark folder of `reso demo --pool …`): its hull "
             "against the first's at the first's budgets, and both QNCs.", show_default="none")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
) -> None:
    """ReSo's accuracy–cost hull against the single models' (which any random mix of them reaches): the mean
    gain over a decade of budgets below the best single model's cost, the worst gap, QNC and the share of the
    gap to the oracle closed, each with its 95 % interval."""
    from reso.evals.reports.compare import CompareError
    from reso.evals.reports.frontier import frontier_of_folders
    from reso.evals.reports.frontier_report import write_frontier

    out_folder("--out", out)
    folders = list(dict.fromkeys(_expand(dirs)))
    if versus:
        _versus(folders, list(dict.fromkeys(_expand(versus))), json_output)
        return
    try:
        found = frontier_of_folders(folders)
    except CompareError as error:
        fail(str(error))
    report = found.to_json()
    if out is not None:
        report["files"] = write_frontier(out, found, f"Frontier ({found.items} items)")
    if json_output:
        typer.echo(json.dumps(report))
        return
    from rich.console import Console

    print_frontier(Console(), found)
    for path in report.get("files", []):
        typer.echo(f"wrote {path}")


def _versus(base: list[Path], other: list[Path], json_output: bool) -> None:
    """Print the second router's hull against the first's (`reso.evals.reports.hull_versus`)."""
    from reso.evals.reports.compare import CompareError, load_run
    from reso.evals.reports.frontier_report import versus_lines
    from reso.evals.reports.hull_versus import versus

    try:
        found = versus([load_run(f) for f in base], [load_run(f) for f in other])
    except CompareError as error:
        fail(str(error))
    if json_output:
        typer.echo(json.dumps(found.to_json()))
        return
    for line in versus_lines(found):
        typer.echo(line)


def _expand(dirs: list[Path]) -> list[Path]:
    """The run folders: each given folder that is a run, or the test runs under a benchmark's folder."""
    folders: list[Path] = []
    for folder in dirs:
        if folder.is_dir() and not (folder / "summary.json").is_file():
            tests = sorted(p for p in folder.glob("test-*") if (p / "summary.json").is_file())
            if tests:
                folders += tests
                continue
        folders.append(folder)
    return folders


def frontier_table(found: Frontier, title: str | None = None, unit: str = "item") -> Table:
    """The budgets table: each budget's single-model and ReSo hull, and the gain (`unit`: what an item is)."""
    from rich import box
    from rich.table import Table

    from reso.evals.reports.table_labels import frontier_columns

    best_cost = found.best_single_cost_usd
    table = Table(title=title or f"Frontier on {found.items} {unit}s", box=box.SIMPLE_HEAD, show_edge=False)
    for header in frontier_columns(unit):
        table.add_column(header, justify="right")
    for budget, single, reso in zip(found.budgets, found.single_at, found.reso_at, strict=True):
        table.add_row(f"${budget:.5f}", f"{budget / best_cost:.2f}", f"{single:.1%}",
                      f"{reso:.1%}" if reso > 0 or budget >= (found.reso_hull or [(0.0, 0.0)])[0][0] else "—",
                      f"{(reso - single) * 100:+.1f}")
    return table


def print_frontier(console: Console, found: Frontier, title: str | None = None, unit: str = "item") -> None:
    """The budgets table (`frontier_table`) and the figures."""
    from reso.evals.reports.frontier_report import frontier_lines

    console.print(frontier_table(found, title, unit))
    for line in frontier_lines(found, unit):
        console.print(line, highlight=False)
