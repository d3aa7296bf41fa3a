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


# A run setting's option, where its name is not the setting's.
SETTING_OF = {"answer_value": "answer_value_usd"}


def _shown(value: Any) -> str:
    return str(value.value if isinstance(value, Enum) else value)


def test_a_default_shown_for_a_run_setting_is_the_settings_default() -> None:
    defaults = {f.name: f.default for f in fields(ReSoSettings)}
    checked = 0
    for (name, option), param in OPTIONS.items():
        setting = SETTING_OF.get(param.name, param.name)
        if name in ("solve", "eval") and setting in defaults and isinstance(param.show_default, str):
            default = defaults[setting]
            if default not in (None, ""):
                assert param.show_default == _shown(default), (name, option)
                checked += 1
            else:  # the settings leave it out: so does the help, saying what happens then
                assert param.show_default.startswith(("none", "the ", "4 with")), (name, option)
    assert checked >= 10


def test_the_prm_options_show_the_trainers_defaults() -> None:
    signature = inspect.signature(train_prm).parameters
    for option in ("--epochs", "--lr", "--effective-batch"):
        param = OPTIONS[("crm train", option)]
        assert float(param.show_default) == signature[param.name].default


# Each concept, its one option name, and the commands that take it.
CONCEPTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "the planner": ("--planner", ("solve", "plan")),
    "the LLM planner's model": ("--planner-model", ("solve", "plan")),
    "the question from a file": ("--file", ("solve", "plan")),
    "the agent pool": ("--pool", ("solve", "eval", "demo")),
    "a price list": ("--prices", ("solve", "eval", "demo", "pool show")),
    "the DADB": ("--db", ("solve", "eval")),
    "the CRM scorer": ("--scorer", ("solve", "eval", "bench dag")),
    "candidates per subtask": ("--k", ("solve", "eval", "bench dag", "bench selection", "bench eval")),
    "the selection's exploration constant": ("--exploration", ("eval", "bench routing")),
    "USD per question": ("--max-usd", ("solve", "eval")),
    "tokens per question": ("--max-tokens", ("solve", "eval")),
    "questions in flight": ("--concurrency", ("eval", "demo", "bench eval", "bench faults", "bench scale")),
    "the Ray cluster": ("--address", ("eval", "demo", "bench scale")),
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


def test_escalate_to_names_the_stage_each_choice_makes() -> None:
    text = " ".join(OPTIONS[("eval", "--escalate-to")].help.split())
    adaptive, peer = text.index("The adaptive stage:"), text.index("The peer stage")
    assert adaptive < text.index("ranked") < text.index("reliable") < peer < text.index("diverse")
