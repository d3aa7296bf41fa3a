"""Settings as a tree: a frozen dataclass whose fields are settings or sections (frozen dataclasses of settings).

Each section is declared once, by the code that acts on it (the selector's `SelectorConfig` is the `selection`
section, the fine stage's `AskingConfig` the `asking` section, …), and handed down unchanged. A setting is a
field whose metadata has a `description`; its metadata may also say:

- `cli`: it is one of the command's main options (`--name`; `flag` gives another spelling);
- `answers`: whether it changes what a run answers or how it is judged (default True), which provenance and
  resume read.

This module turns dotted keys (`asking.k_max`), settings files (YAML, nested by section) and option text into a
tree, checking each value against its field's type with pydantic and naming the key and where it came from.
The checks of values against each other stay with each section (its `__post_init__`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")

__all__ = ["Setting", "SettingsError", "apply", "flat_values", "load_settings_file", "parse_text",
           "settings_of"]


class SettingsError(ValueError):
    """A settings key or value that cannot be: one line naming the key and where it was given."""


@dataclass(frozen=True)
class Setting:
    """One setting of a tree: its dotted key, the section that declares it and the field."""

    key: str
    owner: type
    field: dataclasses.Field[Any]
    hint: Any

    @property
    def name(self) -> str:
        return self.field.name

    @property
    def description(self) -> str:
        return str(self.field.metadata["description"])

    @property
    def main_option(self) -> bool:
        return bool(self.field.metadata.get("cli", False))

    @property
    def changes_answers(self) -> bool:
        return bool(self.field.metadata.get("answers", True))

    @property
    def flag(self) -> str:
        """The command-line spelling of a main option (`--answer-value`), or the `--set` key's."""
        return str(self.field.metadata.get("flag") or "--" + self.name.replace("_", "-"))

    @property
    def default(self) -> Any:
        if self.field.default is not dataclasses.MISSING:
            return self.field.default
        if self.field.default_factory is not dataclasses.MISSING:
            return self.field.default_factory()
        return None

    def check(self, value: Any, where: str) -> Any:
        """`value` as this setting's type, or a `SettingsError` naming the key and `where`."""
        from pydantic import ValidationError

        try:
            return _adapter(self.hint).validate_python(value)
        except ValidationError as error:
            reason = error.errors()[0]["msg"]
            named = where if where == self.flag else f"{where}: {self.key}"  # `--mode: …`, `--set: asking.k: …`
            raise SettingsError(f"{named}: {reason}, got {value!r}") from None


@functools.cache
def _adapter(hint: Any) -> Any:
    """pydantic's validator for `hint` (a `TypeAdapter`), imported when a value is first checked: building the
    command line's options from the trees reads their types only."""
    from pydantic import TypeAdapter

    return TypeAdapter(hint)


def _is_section(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _hints(root: type) -> dict[str, Any]:
    """The type of each field of `root` that names one this module can see: a field typed by a class imported
    for type checking only (a backend, a run's recorded benchmark) is neither a setting nor a section."""
    module = vars(sys.modules[root.__module__])
    hints: dict[str, Any] = {}
    for item in dataclasses.fields(root):
        holder = type("_Field", (), {"__annotations__": {"value": item.type}})  # one annotation, resolved alone
        try:
            hints[item.name] = typing.get_type_hints(holder, module)["value"]
        except NameError:
            continue
    return hints


@functools.cache
def settings_of(root: type, prefix: str = "") -> tuple[Setting, ...]:
    """Every setting of the tree `root`, depth first, keyed from `prefix`."""
    hints = _hints(root)
    found: list[Setting] = []
    for item in dataclasses.fields(root):
        key = f"{prefix}{item.name}"
        if item.name not in hints:
            continue
        if _is_section(hints[item.name]):
            found.extend(settings_of(hints[item.name], f"{key}."))
        elif "description" in item.metadata:
            found.append(Setting(key, root, item, hints[item.name]))
    return tuple(found)


def _by_key(root: type) -> dict[str, Setting]:
    return {setting.key: setting for setting in settings_of(root)}


def parse_text(setting: Setting, text: str, where: str) -> Any:
    """Option or `--set` text as the setting's value: text settings take it as it is, the others read it as YAML
    (`3`, `0.5`, `inf`, `true`, `none`) before their type checks it."""
    if setting.hint is str:
        return setting.check(text, where)
    lowered = text.strip().lower()
    if lowered in ("none", "null", "~", ""):
        value: Any = None
    elif lowered in ("inf", "+inf", "infinity"):
        value = math.inf
    else:
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text
    return setting.check(value, where)


def _nested(values: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted keys as a mapping nested by section (`{"asking.k": 3}` → `{"asking": {"k": 3}}`)."""
    tree: dict[str, Any] = {}
    for key, value in values.items():
        head, _, rest = key.partition(".")
        if rest:
            tree.setdefault(head, {})[rest] = value
        else:
            tree[head] = value
    return tree


def _flatten(values: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in values.items():
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def apply(base: T, changes: Mapping[str, Any], where: str = "settings") -> T:
    """`base` (a tree) with `changes` (dotted keys, or a mapping nested by section), each value checked against
    its field's type and each changed section checked again (its `__post_init__`).

    Raises:
        SettingsError: An unknown key or a value of the wrong type, naming the key and `where`.
        ValueError: Values that cannot go together (the section's own check).
    """
    known = _by_key(type(base))
    flat = dict(_flatten(changes))
    unknown = sorted(set(flat) - set(known))
    if unknown:
        raise SettingsError(f"{where}: unknown setting {unknown[0]!r}; the settings are listed by "
                            f"`reso settings`" + (f" (also unknown: {', '.join(unknown[1:])})" if unknown[1:] else ""))
    checked = {key: known[key].check(value, where) for key, value in flat.items()}
    return _replace(base, _nested(checked))


def _replace(node: T, changes: Mapping[str, Any]) -> T:
    own = {name: (_replace(getattr(node, name), value) if isinstance(value, Mapping) and
                  dataclasses.is_dataclass(getattr(node, name)) else value)
           for name, value in changes.items()}
    # A section whose defaults depend on other settings (`SelectorConfig`) says how it is changed.
    replaced = getattr(node, "replaced", None)
    if replaced is not None:
        return replaced(**own)
    return dataclasses.replace(node, **own)  # type: ignore[type-var]  # node is a dataclass instance


def flat_values(tree: Any) -> dict[str, Any]:
    """Every setting of `tree` (an instance) by dotted key."""
    every = settings_of(type(tree))  # type: ignore[arg-type]  # mypy: type[Any] is not Hashable
    return {setting.key: _get(tree, setting.key) for setting in every}


def _get(tree: Any, key: str) -> Any:
    for part in key.split("."):
        tree = getattr(tree, part)
    return tree


def load_settings_file(path: Path) -> dict[str, Any]:
    """A settings file: YAML, nested by section (`asking: {k: 3}`), or dotted keys (`asking.k: 3`).

    Raises:
        SettingsError: Naming the file, for one that is missing, not YAML or not a mapping.
    """
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"{path}: settings file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read the settings file ({error})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise SettingsError(f"{path}{line}: not YAML ({getattr(error, 'problem', error)})") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, Mapping):
        raise SettingsError(f"{path}: a settings file is a mapping of sections (asking: {{k: 3}}), "
                            f"not a {type(loaded).__name__}")
    return dict(_flatten(loaded))
