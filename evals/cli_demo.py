"""`reso demo`: the offline main job (train, then test ReSo against the baselines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer


def demo_command(
    out: Annotated[Path, typer.Option(help="Output folder for all runs, the CRM and the reports.")] = Path(
        "runs/demo"),
    level: Annotated[str, typer.Option(help="GSM8K-MAS level: easy (3 sub-questions), medium (5), hard (7).")] = "easy",
    pool: Annotated[Optional[str], typer.Option(help="Pool YAML; default: the embedded replay pool.")] = None,
    concurrency: Annotated[int, typer.Option(help="Questions in flight at once.")] = 16,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    train_limit: Annotated[Optional[int], typer.Option(help="Only the first N training items.")] = None,
    test_limit: Annotated[Optional[int], typer.Option(help="Only the first N test items.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print the table as one JSON object last.")] = False,
) -> None:
    """Train ReSo on GSM8K-MAS, then compare it on the test split with single models, random and oracle."""
    from rich.console import Console
    from rich.table import Table

    from reso.evals.demo import DemoConfig, comparison_rows, run_demo, write_comparison

    if level not in ("easy", "medium", "hard"):
        _fail("--level must be easy, medium or hard")
    if pool:
        _check_pool(pool)
    console = Console(stderr=True)
    config = DemoConfig(out=out, level=level, pool=pool or "", concurrency=concurrency, seed=seed,
                        train_limit=train_limit, test_limit=test_limit)
    rows = comparison_rows(run_demo(config, log=lambda line: console.print(f"[dim]{line}[/dim]")))
    path = write_comparison(out, rows)
    if json_output:
        typer.echo(json.dumps({"level": level, "rows": rows, "report": str(out / "report.md")}))
        return
    table = Table(title=f"GSM8K-MAS-{level.capitalize()} test (recorded answers replayed)")
    for column in ("method", "items", "accuracy", "tokens / item", "USD", "cost vs best single"):
        table.add_column(column)
    for row in rows:
        ratio = f"{row['cost_vs_best_single']:.2f}×" if row["cost_vs_best_single"] is not None else "-"
        table.add_row(row["method"], str(row["n"]), f"{row['accuracy']:.1%}", f"{row['tokens_per_item']:.0f}",
                      f"{row['cost_usd']:.3f}", ratio)
    Console().print(table)
    typer.echo(f"report: {out / 'report.md'}  (plots beside it; per-run reports in {out}/*/report.md)")
    typer.echo(f"table: {path}")


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _check_pool(pool: str) -> None:
    """Load the pool and its chat models (API-key variables included) before the long job starts, so a bad
    pool file or an unset key is one line and exit code 2 rather than a traceback minutes in."""
    from reso.agents.invoke import models_for_pool
    from reso.agents.pool import load_pool

    try:
        models_for_pool(load_pool(pool))
    except ValueError as error:  # PoolError, ModelLoadError, ReplayError
        _fail(str(error).strip().splitlines()[0])
