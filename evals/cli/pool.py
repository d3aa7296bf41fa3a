"""`reso pool …`: inspect agent pools."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from reso.evals.cli.options import POOL_PRICES

if TYPE_CHECKING:
    from rich.table import Table

    from reso.agents.pool import Pool

app = typer.Typer(help="Inspect agent pools.", no_args_is_help=True)


@app.command("show")
def show(
    pool: Annotated[Optional[str], typer.Argument(
        help="Pool YAML file, or replay:FILE[,FILE…] (every recorded model); the default pool when omitted.")] = None,
    prices: Annotated[Optional[Path], typer.Option(help="Price list YAML (models: {NAME: {input, output}}).",
                                                   show_default=POOL_PRICES)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the agents as JSON.")] = False,
) -> None:
    """List a pool's agents with their model, role and prices."""
    import json

    from rich.console import Console

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
    Console().print(pool_table(agents))


def pool_table(agents: Pool) -> Table:
    """The pool as a table that keeps every model's name whole at 80 columns: models by name (a replay pool's
    files named once, below), long ids and roles wrapped instead."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from reso.agents.profiles import model_files

    names = [a.model.model_name for a in agents]
    files = list(dict.fromkeys(name for a in agents for name in model_files(a.model.spec)))
    caption = f"recorded in {', '.join(map(escape, files))}" if files else None
    table = Table(title=f"pool {escape(agents.name)} ({len(agents)} agents)", caption=caption,
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("id", overflow="fold")
    table.add_column("model", no_wrap=True, min_width=max(map(len, names), default=5))
    table.add_column("role", overflow="fold")
    table.add_column("$/M in/out", justify="right", no_wrap=True)
    for a, name in zip(agents, names, strict=True):
        table.add_row(escape(a.id), escape(name), escape(a.role), f"{a.price_in:g}/{a.price_out:g}")
    return table
