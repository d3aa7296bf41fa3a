"""What `reso demo` prints is named as the documentation names it: from the committed main job
(docs/results/demo.json), the printed comparison table's columns and rows, the printed frontier table's
columns and the printed frontier figures are those of the blocks `reso docs` renders into README.md and
docs/results.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reso.evals.cli.demo_tables import all_items_table
from reso.evals.cli.frontier import frontier_table
from reso.evals.reports.frontier import Frontier
from reso.evals.reports.frontier_report import frontier_lines
from reso.evals.reports.results_doc import UNIT, render_blocks

ROOT = Path(__file__).resolve().parents[2]
RUN: dict[str, Any] = json.loads((ROOT / "docs" / "results" / "demo.json").read_text(encoding="utf-8"))


def markdown(block: str) -> tuple[list[str], list[str]]:
    """A markdown table's column names and its rows' first cells."""
    lines = block.splitlines()
    cells = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]
    return cells[0], [row[0] for row in cells[2:]]


@pytest.mark.parametrize("stem", sorted(RUN["tables"]))
def test_the_printed_comparison_table_has_the_docs_columns_and_rows(stem: str) -> None:
    columns, rows = markdown(render_blocks(RUN)[f"table-{stem}"])
    printed = all_items_table("title", RUN["tables"][stem])
    headers = [str(column.header) for column in printed.columns]
    # The terminal's table adds one column (the gain split by cause) after the docs' five.
    assert headers[:len(columns)] == columns and len(headers) == len(columns) + 1
    assert [str(cell) for cell in printed.columns[0].cells] == rows
    assert rows[0] == "reso" and any(row.startswith("best single model on the test") for row in rows)
    assert any(row.startswith("cascade: ") and " > " in row for row in rows)  # both wrap between models


@pytest.mark.parametrize("stem", sorted(RUN["frontiers"]))
def test_the_printed_frontier_has_the_docs_columns_and_figures(stem: str) -> None:
    found = Frontier.from_json(RUN["frontiers"][stem])
    columns, _ = markdown(render_blocks(RUN)[f"frontier-{stem}"])
    assert [str(column.header) for column in frontier_table(found, unit=UNIT).columns] == columns
    # The README's headline table names the figures the printed lines give, in the same order.
    figures, _ = markdown(render_blocks(RUN)["frontier-figures"])
    names = [figure.split(" (")[0].split(",")[0] for figure in figures[1:]]
    printed = [line.split(":")[0].split(" (")[0].split(",")[0] for line in frontier_lines(found, UNIT)]
    assert printed[:len(names)] == names
    assert names == ["best single model", "mean gain over the single models' hull", "worst gap", "QNC",
                     "gap to the oracle closed at its cost"]
    assert all(f"per {UNIT}" in line for line in frontier_lines(found, UNIT) if "$" in line)
