"""`reso crm …`: train and evaluate Collaborative Reward Models."""

from __future__ import annotations

import typer

app = typer.Typer(help="Train and evaluate Collaborative Reward Models.", no_args_is_help=True)
