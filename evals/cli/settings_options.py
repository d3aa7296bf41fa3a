"""A command's options generated from its settings trees (`reso.graphs.settings_tree`).

A command names its trees (`reso eval`: the run settings, `run` and `backend`; `reso demo`: `demo` and
`backend`). The settings whose metadata marks them `cli` become the command's main options; every other one is
set with `--set SECTION.FIELD=VALUE` or a `--settings FILE.yaml` (the file the Python API and Studio take), and the
flags that went away when the settings became a tree answer with one line naming their new spelling.

Typer reads a command's options from its signature, so `settings_options` gives the command a signature of its own
options plus the generated ones; what the user gave reaches the command as one `GivenSettings`. Precedence, low
to high: the defaults, the file, `--set`, the main options.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar

import typer

from reso.evals.cli.errors import fail
from reso.graphs.settings import COMMAND_SECTIONS
from reso.graphs.settings_tree import (
    Setting,
    SettingsError,
    apply,
    load_settings_file,
    parse_text,
    settings_of,
)

__all__ = ["GivenSettings", "Tree", "settings_options"]

F = TypeVar("F", bound=Callable[..., Any])

SET_HELP = ("SECTION.FIELD=VALUE: any other setting (`reso settings` lists them: asking.k_max=3, "
            "selection.policy=random, run.budget_usd=2, …); repeat for several.")
SETTINGS_HELP = ("A YAML settings file, nested by section (asking: {k_max: 3}): the file the Python API "
                 "(ReSoSettings.load) and Studio take; options and --set override it.")


@dataclass(frozen=True)
class Tree:
    """One settings tree of a command: its key prefix ('' for the run settings, whose sections are top-level
    keys) and its type."""

    prefix: str
    kind: type

    def settings(self) -> tuple[Setting, ...]:
        return settings_of(self.kind, f"{self.prefix}." if self.prefix else "")

    def owns(self, key: str) -> bool:
        return any(setting.key == key for setting in self.settings())


@dataclass(frozen=True)
class GivenSettings:
    """What the user set: a settings file, `--set` pairs and the main options, not yet checked."""

    trees: tuple[Tree, ...]
    file: Path | None = None
    pairs: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    """Main options given, by setting key, as typed."""
    former: Mapping[str, str] = field(default_factory=dict)
    """Flat names that went away (`k`), by their key now (`asking.k`)."""

    def build(self, prefix: str, base: Any) -> Any:
        """`base` (the tree `prefix` names, at its defaults or the command's) with what the user set for it; a bad
        key or value exits 2 with one line naming it and where it was given."""
        tree = next(tree for tree in self.trees if tree.prefix == prefix)
        try:
            return self._apply(tree, base)
        except (SettingsError, ValueError) as error:
            fail(str(error))

    def _apply(self, tree: Tree, base: Any) -> Any:
        by_key = {setting.key: setting for setting in tree.settings()}
        given: dict[str, Any] = {}  # each value checked where it was given; a later source overrides
        if self.file is not None:
            values = load_settings_file(self.file)
            self._refuse_unknown(values, str(self.file))
            given |= {key: by_key[key].check(value, str(self.file)) for key, value in values.items() if key in by_key}
        pairs = dict(self._pair(text) for text in self.pairs)
        self._refuse_unknown(pairs, "--set")
        given |= {key: parse_text(by_key[key], text, "--set") for key, text in pairs.items() if key in by_key}
        given |= {key: parse_text(by_key[key], text, by_key[key].flag)
                  for key, text in self.options.items() if key in by_key}
        strip = len(tree.prefix) + 1 if tree.prefix else 0
        # Applied at once: values that only go together (a rule and its threshold) may come from different sources.
        return apply(base, {key[strip:]: value for key, value in given.items()}, "settings") if given else base

    def _pair(self, text: str) -> tuple[str, str]:
        key, equals, value = text.partition("=")
        if not equals or not key.strip():
            raise SettingsError(f"--set takes SECTION.FIELD=VALUE (asking.k_max=3), got {text!r}")
        return key.strip(), value.strip()

    def _refuse_unknown(self, values: Mapping[str, Any], where: str) -> None:
        sections = {tree.prefix for tree in self.trees if tree.prefix}
        for key in values:
            if any(tree.owns(key) for tree in self.trees):
                continue
            if key.partition(".")[0] in COMMAND_SECTIONS and key.partition(".")[0] not in sections:
                continue  # another command's section in a shared settings file
            if key in self.former:
                raise SettingsError(f"{where}: {key} is now {self.former[key]}")
            raise SettingsError(f"{where}: unknown setting {key!r}; `reso settings` lists them")


def shown_default(setting: Setting) -> str:
    """The default as `--help` shows it."""
    default = setting.default
    if default is None or default == "":
        return str(setting.field.metadata.get("unset", "none"))
    return str(default.value if hasattr(default, "value") else default)


def _metavar(hint: Any) -> str:
    """How `--help` shows what an option takes: its choices, or the kind of value."""
    if isinstance(hint, type) and issubclass(hint, Enum):
        return "|".join(str(member.value) for member in hint)
    return {int: "INTEGER", float: "FLOAT"}.get(hint, "INTEGER" if hint == int | None else
                                                 "FLOAT" if hint == float | None else "TEXT")


def _main_parameter(setting: Setting) -> inspect.Parameter:
    if setting.hint is bool:  # a switch: --swap-split / --no-swap-split
        name = setting.flag[2:]
        switch = typer.Option(f"--{name}/--no-{name}", help=setting.description, show_default=shown_default(setting))
        return inspect.Parameter(_ident("main", setting.key), inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Annotated[Optional[bool], switch])
    envvar = setting.field.metadata.get("envvar")  # only the command line reads it: the settings never do
    option = typer.Option(setting.flag, help=setting.description, show_default=shown_default(setting), envvar=envvar,
                          show_envvar=False, metavar=_metavar(setting.hint))
    return inspect.Parameter(_ident("main", setting.key), inspect.Parameter.KEYWORD_ONLY, default=None,
                             annotation=Annotated[Optional[str], option])


def _former_parameter(flag: str, hint: Any) -> inspect.Parameter:
    """A hidden option for a flag that went away, so that using it says its new spelling."""
    if hint is bool:
        name = flag[2:]
        option = typer.Option(f"--{name}/--no-{name}", hidden=True)
        annotation: Any = Annotated[Optional[bool], option]
    else:
        annotation = Annotated[Optional[str], typer.Option(flag, hidden=True)]
    return inspect.Parameter(_ident("former", flag[2:].replace("-", "_")), inspect.Parameter.KEYWORD_ONLY,
                             default=None, annotation=annotation)


def _ident(kind: str, key: str) -> str:
    return f"_{kind}_" + key.replace(".", "__")


def settings_options(trees: Sequence[Tree], former: Mapping[str, str]) -> Callable[[F], F]:
    """Give a typer command the main options of `trees`, `--set`, `--settings` and the former flags.

    The command declares its own options and a keyword `given: GivenSettings`, which receives what the user set.
    `former` maps each flag that went away (`--k-max`) to the key that took its place (`asking.k_max`).
    """
    every = {setting.key: setting for tree in trees for setting in tree.settings()}
    main = [setting for setting in every.values() if setting.main_option]
    flags = {setting.flag for setting in main}
    gone = {flag: key for flag, key in former.items() if flag not in flags}

    def decorate(command: F) -> F:
        own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != "given"]
        generated = [_main_parameter(setting) for setting in main]
        generated.append(inspect.Parameter("_set_pairs", inspect.Parameter.KEYWORD_ONLY, default=None,
                                           annotation=Annotated[Optional[list[str]], typer.Option(
                                               "--set", help=SET_HELP, show_default="none")]))
        generated.append(inspect.Parameter("_settings_file", inspect.Parameter.KEYWORD_ONLY, default=None,
                                           annotation=Annotated[Optional[Path], typer.Option(
                                               "--settings", help=SETTINGS_HELP, show_default="none")]))
        generated += [_former_parameter(flag, every[key].hint) for flag, key in gone.items()]
        flat_former = {flag[2:].replace("-", "_"): key for flag, key in former.items()}

        @functools.wraps(command)
        def run(**given: Any) -> Any:
            for flag, key in gone.items():
                if given.pop(_ident("former", flag[2:].replace("-", "_")), None) is not None:
                    fail(f"{flag} is now --set {key}=VALUE (or {key.replace('.', ': {', 1)}: …}} in a --settings "
                         "file)" if "." in key else f"{flag} is now --set {key}=VALUE")
            options = {setting.key: given.pop(_ident("main", setting.key)) for setting in main}
            settings = GivenSettings(trees=tuple(trees), file=given.pop("_settings_file"),
                                     pairs=tuple(given.pop("_set_pairs") or ()),
                                     options={key: str(text).lower() if isinstance(text, bool) else text
                                              for key, text in options.items() if text is not None},
                                     former=flat_former)
            return command(**given, given=settings)

        parameters = own + generated
        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run  # type: ignore[return-value]

    return decorate
