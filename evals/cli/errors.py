"""How a command refuses bad input: one plain `error:` line on standard error and an exit code."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: object, code: int = 2) -> NoReturn:
    """Print `error: MESSAGE` and exit with `code` (2: bad input, as every command does).

    A plain line rather than typer's boxed usage panel: messages name files, lines and fields and must stay
    whole, on one line.
    """
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)
