"""`reso datasets`: the registered dataset names `reso eval --dataset` takes, and what each one is."""

from __future__ import annotations

import json
from typing import Annotated

import typer


def datasets_command(
    json_output: Annotated[bool, typer.Option("--json", help="Print {name: description} as JSON.")] = False,
) -> None:
    """List the registered datasets (any .json / .jsonl file path works too)."""
    from reso.evals.datasets import list_datasets

    names = list_datasets()
    if json_output:
        typer.echo(json.dumps(names, indent=2, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(names)} registered datasets (or pass a file path)")
    table.add_column("name")
    table.add_column("what it is")
    for name, description in names.items():
        table.add_row(name, description)
    Console().print(table)
