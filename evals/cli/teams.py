"""`reso teams`: the best fixed voting team of a pool, chosen on one oracle run and scored on another, beside
the best team in hindsight and the oracle (`reso.evals.reports.teams`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from reso.evals.cli.errors import fail


def teams_command(
    choose: Annotated[Path, typer.Argument(
        help="Oracle run (`reso eval --method oracle`) the team is chosen on: the training side.",
        show_default=False)],
    test: Annotated[Path, typer.Argument(help="Oracle run the chosen team is scored on.", show_default=False)],
    max_size: Annotated[int, typer.Option(help="The most agents a team may have.")] = 5,
    cost_cap: Annotated[float, typer.Option(
        help="The most a team may cost on the choosing run, in multiples of its best single agent's cost.")] = 3.0,
    reference: Annotated[Optional[str], typer.Option(
        help="The agent (id or model name) the cost cap and every row are measured against; default the best "
             "single agent on CHOOSE.")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object last.")] = False,
) -> None:
    """How far agreement alone takes a pool: every team of up to MAX_SIZE agents within the cost cap votes
    on CHOOSE's recorded answers (weighted by each agent's record there); the best team and the best single
    agent (or the reference) are scored on TEST with paired intervals, beside the best team in hindsight
    (chosen with TEST's labels: a bound, not a method) and the oracle."""
    from rich.console import Console

    from reso.evals.cli.compare import comparison_table
    from reso.evals.reports.compare import CompareError
    from reso.evals.reports.teams import study_teams

    try:
        study = study_teams(choose, test, max_size=max_size, cost_cap=cost_cap, reference=reference)
    except (CompareError, ValueError) as error:
        fail(str(error))
    if json_output:
        typer.echo(json.dumps(study.to_json()))
        return
    console = Console()
    console.print(comparison_table(study.comparison, width=console.width))
    measure = "the reference agent's" if reference else "the best single agent's"
    for label, team in (("chosen team", study.team), ("best team in hindsight", study.hindsight)):
        console.print(f"{label}: {', '.join(team.agents)} ({team.cost_ratio:.2f}x {measure} cost where it was "
                      "chosen)")
    for label, share in study.any_right.items():
        console.print(f"{label}: some member right on {share:.1%} of the test composites")
