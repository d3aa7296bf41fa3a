"""`reso bench …`: benchmark scripts that measure ratios side by side in one run and print JSON."""

from __future__ import annotations

import typer

app = typer.Typer(help="Benchmarks: side-by-side measurements that print one JSON object last.",
                  no_args_is_help=True)
