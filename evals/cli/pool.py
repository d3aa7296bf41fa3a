"""`reso pool …`: inspect agent pools."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

app = typer.Typer(help="Inspect agent pools.", no_args_is_help=True)


@app.command("show")
def show(
    pool: Annotated[Optional[str], typer.Argument(
        help="Pool YAML file, or replay:FILE[,FILE…] (every recorded model); the default pool when omitted.")] = None,
    prices: Annotated[Optional[Path], typer.Option(help="Price list YAML (models: {NAME: {input, output}}).")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the agents as JSON.")] = False,
) -> None:
    """List a pool's agents with their model, role and prices."""
    import json

    from rich.console import Console
    from rich.table import Table

    from reso.agents.pool_source import load_pool_for

    try:
        agents = load_pool_for(pool, prices)
    except ValueError as error:  # PoolError, ReplayError, PriceListError
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    if json_output:
        rows = [
            {"id": a.id, "model": a.model.spec, "role": a.role, "kind": a.kind,
             "price_in": a.price_in, "price_out": a.price_out}
            for a in agents
        ]
        typer.echo(json.dumps({"pool": agents.name, "agents": rows}, indent=2))
        return
    table = Table(title=f"pool {agents.name} ({len(agents)} agents)")
    for column in ("id", "model", "role", "$/M in", "$/M out"):
        table.add_column(column)
    for a in agents:
        table.add_row(a.id, a.model.spec, a.role, f"{a.price_in:g}", f"{a.price_out:g}")
    Console().print(table)
