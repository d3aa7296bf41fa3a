"""`reso settings`: every setting a command takes, with its key, default and meaning, read off the trees."""

from __future__ import annotations

from typing import Annotated

import typer

from reso.evals.cli.errors import fail


def settings_command(
    command: Annotated[str, typer.Argument(help="eval | solve | demo: whose settings to list.")] = "eval",
) -> None:
    """List the settings of COMMAND: main options by their flag, every other one for --set KEY=VALUE or a
    --settings file."""
    from rich.console import Console
    from rich.table import Table

    from reso.evals.cli.demo import DEMO_TREES
    from reso.evals.cli.eval import EVAL_TREES
    from reso.evals.cli.settings_options import Tree, shown_default
    from reso.graphs.settings import ReSoSettings

    trees = {"eval": EVAL_TREES, "solve": (Tree("", ReSoSettings),), "demo": DEMO_TREES}
    if command not in trees:
        fail(f"COMMAND must be one of {', '.join(trees)}, got {command!r}")
    table = Table(title=f"reso {command}: settings", show_lines=False)
    for heading in ("key", "option", "default", "meaning"):
        table.add_column(heading, overflow="fold")
    for tree in trees[command]:
        for setting in tree.settings():
            table.add_row(setting.key, setting.flag if setting.main_option else "--set",
                          shown_default(setting), setting.description)
    Console(width=160).print(table)
