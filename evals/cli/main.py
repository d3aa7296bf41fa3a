"""The `reso` command line. Sub-commands live in their own modules and import heavy libraries lazily,
so `reso --help` stays fast."""

from __future__ import annotations

import typer

from reso.evals.bench.cli import app as bench_app
from reso.evals.cli.compare import compare_command
from reso.evals.cli.crm import app as crm_app
from reso.evals.cli.datasets import datasets_command
from reso.evals.cli.demo import demo_command
from reso.evals.cli.docs import docs_command
from reso.evals.cli.eval import eval_command
from reso.evals.cli.frontier import frontier_command
from reso.evals.cli.interrupt import ResoGroup
from reso.evals.cli.plan import plan_command
from reso.evals.cli.pool import app as pool_app
from reso.evals.cli.settings_list import settings_command
from reso.evals.cli.solve import solve
from reso.evals.cli.synth import app as synth_app
from reso.evals.cli.teams import teams_command

app = typer.Typer(
    name="reso",
    help="ReSo on LangGraph: reward-driven self-organising multi-agent reasoning.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=ResoGroup,  # Ctrl-C in any command: what was saved, how to resume, exit code 130
)
app.add_typer(pool_app, name="pool")
app.add_typer(crm_app, name="crm")
app.add_typer(bench_app, name="bench")
app.add_typer(synth_app, name="synth")
app.command("solve")(solve)
app.command("plan")(plan_command)
app.command("eval")(eval_command)
app.command("demo")(demo_command)
app.command("compare")(compare_command)
app.command("frontier")(frontier_command)
app.command("teams")(teams_command)
app.command("datasets")(datasets_command)
app.command("docs")(docs_command)
app.command("settings")(settings_command)
