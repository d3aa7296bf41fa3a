"""`reso plan`: show how a question would be decomposed into a task DAG, without running any agent.

The root app registers `plan_command` as the `plan` command. Output: `{"plan": [{"id", "instruction",
"depends_on"}, ...]}` with `--json`, else a table; repairs, fallbacks and the planner used go to standard
error as `note:` lines, so standard output holds only the plan. Invalid input exits with code 2 and one
`error:` line.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reso.evals.cli.options import NO_PLANNER_MODEL, PLANNER_MODEL_HELP, renamed
from reso.evals.cli.question import QuestionInputError, read_question

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from reso.graphs.dag import TaskDAG


class _InputError(Exception):
    """Bad command-line input: reported as one line, exit code 2."""


def _load_model(spec: str) -> BaseChatModel:
    """The planner's chat model from a spec, through the agents layer's loader."""
    from pydantic import ValidationError

    from reso.agents.profiles import ModelSpec

    try:
        model_spec = ModelSpec(spec=spec)
    except ValidationError:
        raise _InputError(f"--planner-model {spec!r} is not a model spec of the form PROVIDER:MODEL") from None
    from reso.agents.adapters.loader import load_chat_model

    try:
        return load_chat_model(model_spec)
    except Exception as error:  # noqa: BLE001 - any loading failure (provider SDKs raise their own) is config
        first_line = (str(error).splitlines() or [""])[0]
        raise _InputError(f"cannot load --planner-model {spec!r}: {type(error).__name__}: {first_line}") from None


def _print_table(dag: TaskDAG, planner: str) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    waves = dag.levels()
    wave_of = {step: i for i, wave in enumerate(waves) for step in wave}
    steps = f"{len(dag)} step{'s' if len(dag) != 1 else ''}"
    in_waves = f"{len(waves)} wave{'s' if len(waves) != 1 else ''}"
    table = Table(title=f"plan: {steps} in {in_waves}, final step {dag.final_id!r}, planner {planner}",
                  show_lines=True)
    table.add_column("id", no_wrap=True)
    table.add_column("wave", justify="right")
    table.add_column("depends on")
    table.add_column("instruction")
    for step in dag.topological_order():
        node = dag.node(step)
        # Text, not markup: rich would read the brackets of LaTeX and Answer[1] in instructions as tags.
        table.add_row(Text(step), str(wave_of[step]), Text(", ".join(node.depends_on) or "-"),
                      Text(node.instruction))
    Console().print(table)


def plan_command(
    question: Annotated[str | None, typer.Argument(help="The question; '-' reads standard input.")] = None,
    planner: Annotated[str, typer.Option("--planner", "-p", help="auto | structural | llm.")] = "auto",
    planner_model: Annotated[str | None, typer.Option(help=PLANNER_MODEL_HELP,
                                                      show_default=NO_PLANNER_MODEL)] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print only the plan, as JSON.")] = False,
    file: Annotated[str | None, typer.Option(
        "--file", "-f", help="Read the question from a file ('-' for standard input) instead of QUESTION.",
        show_default="none")] = None,
    _model: Annotated[str | None, renamed("--model", "--planner-model")] = None,
) -> None:
    """Print the plan (task DAG) for QUESTION without running any agent."""
    try:
        text = read_question(question, file)

        from reso.graphs.dag import PlanError
        from reso.graphs.planners import PlannerConfigError, make_planner

        chat_model = _load_model(planner_model) if planner_model else None
        try:
            chosen = make_planner(planner, chat_model)
            result: Any = chosen.plan_with_report(text)
        except (PlanError, PlannerConfigError) as error:
            raise _InputError(str(error)) from None
    except (_InputError, QuestionInputError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None

    for line in [f"planner: {result.planner}", *result.errors, *result.notes]:
        typer.echo(f"note: {line}", err=True)
    if json_output:
        typer.echo(json.dumps({"plan": result.dag.to_steps()}, ensure_ascii=False, indent=2))
    else:
        _print_table(result.dag, result.planner)
