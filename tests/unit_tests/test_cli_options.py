"""Every command's options, read off the command line itself: each shows its default (a flag's is its own
name), a default shown for a run setting is that setting's, one concept goes by one option name in every
command that takes it, and a former name is refused in one line naming the new one."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import fields
from enum import Enum
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from reso.evals.cli import app
from reso.evals.cli.demo import DEMO_TREES
from reso.evals.cli.eval import EVAL_TREES
from reso.evals.cli.settings_options import Tree
from reso.graphs.settings import ReSoSettings
from reso.reward.training.prm_training import train_prm


def commands(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every command of `reso` (sub-commands included), by its name after `reso`."""
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield " ".join(path), command


def options(command: Any) -> list[Any]:
    """The options a user sees: not `--help`, not a hidden former name."""
    return [p for p in command.params if p.param_type_name == "option" and not p.hidden and p.name != "help"]


COMMANDS = dict(commands())
OPTIONS = {(name, param.opts[0]): param for name, command in COMMANDS.items() for param in options(command)}


def shows_its_default(param: Any) -> bool:
    """Whether the help shows the option's default: typer's `[default: …]` from the value (None and "" show
    nothing) or from a `show_default` text, or the help text naming it; a required option has none."""
    if param.required or param.is_flag:  # a flag's help shows its default as its own name
        return True
    if isinstance(param.show_default, str):
        return bool(param.show_default)
    return (param.default not in (None, "", ()) and param.show_default is not False) or \
        "default" in (param.help or "").lower()


def test_every_option_of_every_command_shows_its_default() -> None:
    assert len(COMMANDS) > 25 and len(OPTIONS) > 150  # the walk reaches the sub-commands' options
    missing = [f"reso {name} {option}" for (name, option), param in OPTIONS.items() if not shows_its_default(param)]
    assert missing == []


@pytest.mark.parametrize("name", ["solve", "plan", "eval", "demo", "crm train", "bench routing", "synth mas"])
def test_the_help_draws_each_default(name: str) -> None:
    result = CliRunner().invoke(app, [*name.split(), "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    shown = [param for param in options(COMMANDS[name]) if not param.is_flag and not param.required and (
        isinstance(param.show_default, str) or param.default not in (None, "", ()))]
    assert result.output.count("[default: ") >= len(shown)
    for param in shown:
        if isinstance(param.show_default, str):
            assert f"[default: ({param.show_default})]" in result.output


def test_a_default_shown_for_a_main_option_is_its_settings_default() -> None:
    """Main options are generated from the settings: the default they show is the setting's own value, or what
    happens when it is left unset."""
    checked = 0
    for command, trees in (("eval", EVAL_TREES), ("demo", DEMO_TREES), ("solve", (Tree("", ReSoSettings),))):
        for tree in trees:
            for setting in tree.settings():
                if not setting.main_option:
                    continue
                param = OPTIONS[(command, setting.flag if setting.hint is not bool else f"{setting.flag}")]
                default = setting.default
                if default in (None, ""):
                    assert param.show_default == setting.field.metadata.get("unset", "none"), (command, setting.key)
                else:
                    assert param.show_default == _shown(default), (command, setting.key)
                checked += 1
    assert checked >= 20


def _shown(value: Any) -> str:
    return str(value.value if isinstance(value, Enum) else value)


def test_the_prm_options_show_the_trainers_defaults() -> None:
    signature = inspect.signature(train_prm).parameters
    for option in ("--epochs", "--lr", "--effective-batch"):
        param = OPTIONS[("crm train", option)]
        assert float(param.show_default) == signature[param.name].default


# Each concept, its one option name, and the commands that take it.
CONCEPTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "the planner": ("--planner", ("plan",)),
    "the LLM planner's model": ("--planner-model", ("plan",)),
    "the question from a file": ("--file", ("solve", "plan")),
    "the agent pool": ("--pool", ("solve", "eval", "demo")),
    "a price list": ("--prices", ("solve", "pool show")),
    "the DADB": ("--db", ("solve", "eval")),
    "the CRM scorer": ("--scorer", ("solve", "eval", "bench dag")),
    "candidates per subtask": ("--k", ("bench dag", "bench selection", "bench eval")),
    "the selection's exploration constant": ("--exploration", ("bench routing",)),
    "questions in flight": ("--concurrency", ("eval", "bench eval", "bench faults", "bench scale")),
    "the Ray cluster": ("--address", ("bench scale",)),
    "the run measured against": ("--reference", ("compare", "teams")),
    "composite size": ("--level", ("demo", "bench faults")),
}
# The names a concept went by before, which no command takes any more.
FORMER = {("plan", "--model"): "--planner-model", ("bench routing", "--exploration-c"): "--exploration"}


@pytest.mark.parametrize("concept", sorted(CONCEPTS))
def test_one_concept_goes_by_one_option_name(concept: str) -> None:
    option, where = CONCEPTS[concept]
    for name in where:
        assert (name, option) in OPTIONS, f"reso {name} takes {concept} as {option}"
    for (name, former), new in FORMER.items():
        if new == option:
            assert (name, former) not in OPTIONS


@pytest.mark.parametrize(("args", "line"), [
    (["plan", "What is 2 + 2?", "--model", "openai:gpt-4o-mini"], "error: --model is now --planner-model"),
    (["bench", "routing", "--exploration-c", "0.5"], "error: --exploration-c is now --exploration"),
])
def test_a_former_option_name_is_refused_naming_the_new_one(args: list[str], line: str) -> None:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [line]


def test_escalate_to_names_each_choice() -> None:
    from reso.graphs.escalation import AskingConfig, EscalateTo

    text = " ".join(next(f for f in fields(AskingConfig) if f.name == "escalate_to").metadata["description"].split())
    assert all(f" {choice.value}," in text or f" {choice.value} " in text for choice in EscalateTo)
