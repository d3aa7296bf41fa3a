"""`reso demo`'s printed tables of one benchmark (`reso.evals.jobs.demo.comparison_rows`): every run on all
test composites, with its gain over the best single model split by cause, and, where some composites are not
complete (a single model lacks a recording of a sub-question), every run on the complete ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

Row = Mapping[str, Any]


def _accuracy(row: Row, suffix: str = "") -> str:
    low, high = row.get(f"accuracy{suffix}_ci95") or (float("nan"), float("nan"))
    return f"{row[f'accuracy{suffix}']:.1%} [{low:.1%}, {high:.1%}]"


def _versus(row: Row, suffix: str = "") -> str:
    diff = row.get(f"diff_vs_best_single{suffix}_ci95")
    if not diff or row.get(f"diff_vs_best_single{suffix}") is None:
        return "-"
    return f"{row[f'diff_vs_best_single{suffix}'] * 100:+.1f} [{diff[0] * 100:+.1f}, {diff[1] * 100:+.1f}]"


def _ratio(row: Row, suffix: str = "") -> str:
    ratio = row.get(f"cost_vs_best_single{suffix}")
    return f"{ratio:.2f}×" if ratio is not None else "-"


def _causes(row: Row) -> str:
    """Composites won from (+) and lost to (−) the best single: those the loser lost to a missing recording,
    then those it lost to a wrong answer."""
    causes = row.get("gain_by_cause")
    if not causes or not any(causes[key] for key in causes if key != "net"):
        return "-"
    return (f"+{causes['won_missing_recording']}/−{-causes['lost_missing_recording']} · "
            f"+{causes['won_wrong_answer']}/−{-causes['lost_wrong_answer']}")


def _interval_caption(row: Row, suffix: str = "") -> str:
    from reso.evals.reports.clusters import CLUSTER_INTERVALS, CLUSTER_METHOD

    method = row.get(f"interval_method{suffix}")
    if method == CLUSTER_METHOD:
        return f"95 % intervals: {CLUSTER_INTERVALS} (composites that share a question move together)"
    if method:
        return f"95 % intervals: Wilson for the accuracy, {method} for the differences"
    return ""


def _columns(table: Table, rows: Sequence[Row], causes: bool = False) -> list[str]:
    """The columns, named as the documentation names them (`reso.evals.reports.table_labels`; the gain's causes,
    the column the terminal adds, split composites won from and lost to the best single model by the loser's
    cause); returns each row's method."""
    from reso.evals.reports.run_labels import breakable
    from reso.evals.reports.table_labels import CAUSES, COMPARISON_COLUMNS, METHOD

    methods = [breakable(row["method"]) for row in rows]  # wrapped between model names, never cut
    longest = max((len(word) for method in methods for word in method.split()), default=6)
    table.add_column(METHOD, min_width=longest)
    for column in [*COMPARISON_COLUMNS[1:], *([CAUSES] if causes else [])]:
        table.add_column(column)
    return methods


def all_items_table(title: str, rows: Sequence[Row]) -> Table:
    """Every run on all the test composites."""
    from rich.table import Table

    causes = any(row.get("gain_by_cause") for row in rows)
    # Every run is measured on the same items: their number goes in the title, not a column of its own.
    table = Table(title=f"{title}: {rows[0]['n']} composites" if rows else title,
                  caption=_interval_caption(rows[0]) if rows else "")
    methods = _columns(table, rows, causes)
    for method, row in zip(methods, rows, strict=True):
        table.add_row(method, _accuracy(row), _versus(row), f"{row['cost_usd']:.3f}", _ratio(row),
                      *([_causes(row)] if causes else []))
    return table


def complete_items_table(title: str, rows: Sequence[Row]) -> Table:
    """Every run on the complete composites only."""
    from rich.table import Table

    complete, total = rows[0]["n_complete"], rows[0]["n"]
    table = Table(title=f"{title}: the {complete} of {total} composites of which every single model has a "
                        "recording of every sub-question",
                  caption=_interval_caption(rows[0], "_complete"))
    methods = _columns(table, rows)
    for method, row in zip(methods, rows, strict=True):
        table.add_row(method, _accuracy(row, "_complete"), _versus(row, "_complete"),
                      f"{row['cost_usd_complete']:.3f}", _ratio(row, "_complete"))
    return table


def print_benchmark(console: Console, title: str, rows: Sequence[Row]) -> None:
    """The benchmark's tables: all composites, then the complete ones (or one line on completeness)."""
    console.print(all_items_table(title, rows))
    if not rows or "n_complete" not in rows[0]:
        return
    complete, total = rows[0]["n_complete"], rows[0]["n"]
    if complete == total:
        console.print(f"All {total} composites are complete: every single model has a recording of every "
                      "sub-question.")
    elif complete == 0:
        console.print(f"None of the {total} composites is complete: some single model lacks a recording in each.")
    else:
        console.print(complete_items_table(title, rows))
