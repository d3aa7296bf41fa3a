"""What several commands' options share: one name per concept (the planner's model is `--planner-model`
wherever a command takes it) and one help text, and the defaults shown for options whose value, when left
out, the settings or the command choose (typer shows those as `[default: (…)]`).

The options of the run settings are generated from the settings tree instead (`settings_options.py`).
"""

from __future__ import annotations

from typing import Any

import typer

from reso.evals.cli.errors import fail

PRICES_HELP = "Price list YAML for the pool's models."
POOL_PRICES = "the pool's own prices"
PLANNER_MODEL_HELP = "Chat model of the LLM planner, as PROVIDER:MODEL (e.g. openai:gpt-4o-mini)."
NO_PLANNER_MODEL = "none: auto plans MAS-format questions structurally, any other as one step"
NOTHING_WRITTEN = "none: nothing written"


def renamed(old: str, new: str) -> Any:
    """A hidden option under a former spelling, for `Annotated[Optional[str], renamed(...)] = None`: given, it is
    refused in one line naming the spelling every command now uses for the same thing."""
    def refuse(value: object) -> None:
        if value is not None:
            fail(f"{old} is now {new}")

    return typer.Option(old, hidden=True, callback=refuse, show_default=False)
