"""Paths as run files write them: no path of this machine (its folders, the user's home, the interpreter) in a
file meant to be shared, and the same text wherever the run folder and the package are installed.

An absolute path of this machine (a file or folder that is there, or whose folder is) in a run file's text
(`summary.json`, `provenance.json`, the specs and errors in `results.jsonl`) is written as:

- `<reso>/…` for a file of this package (its shipped pools and recordings: `<reso>/agents/data/…`);
- relative to the run folder when the two share a folder below the file system's root (`../data.jsonl`,
  `dadb.sqlite`, `../../crm-general`);
- `~/…` for another file under the home folder;
- else relative to the run folder all the same (`../../../opt/data.jsonl`).

The command line keeps what was typed, its program written as `reso` (not the script's or the
interpreter's path), its absolute paths rewritten as above. A PostgreSQL URL is left to `redact` (its
socket folder is not a file of the run).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

PACKAGE = "<reso>"
"""How a path inside this package is written: `<reso>/agents/data/zeroeval_pool.yaml`."""

PACKAGES = ("agents", "evals", "graphs", "reward")
"""The package's folders under `package_root` (a checkout's other folders, `runs/` say, are not the package's)."""

PROGRAM = "reso"

# An absolute path inside a text: at its start, or after a space, a quote, '=', ',', ':' ('replay:/a.jsonl',
# '--pool=/a.yaml', 'replay:/a.gz,/b.gz#model'); never the '//' of a URL. It ends at a space, a quote, ',',
# '#' (a replay spec's model) or ';'.
_ABSOLUTE = re.compile(r"(?:(?<=^)|(?<=[\s'\"=,:(\[]))/(?!/)[^\s'\",#;)\]]*")
_POSTGRES = re.compile(r"(?i)^postgres(?:ql)?://")


@functools.cache
def package_root() -> Path:
    """The folder that holds this package's `agents/`, `evals/`, … folders (the checkout, for an editable
    install; `site-packages/reso` for a wheel)."""
    return Path(__file__).resolve().parent.parent


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):  # no home folder known
        return None


def portable_path(path: str | Path, folder: Path) -> str:
    """An absolute `path` as a file of the run folder `folder` writes it (see the module docstring); a
    relative one as it is."""
    text = str(path)
    if not os.path.isabs(text):
        return text
    target = Path(os.path.normpath(text))
    resolved = Path(os.path.realpath(text))
    root = package_root()
    for candidate in (target, resolved):
        if any(candidate.is_relative_to(root / package) for package in PACKAGES):
            return str(PurePosixPath(PACKAGE, candidate.relative_to(root).as_posix()))
    base = Path(os.path.realpath(folder))
    shared = Path(os.path.commonpath([resolved, base]))
    home = _home()
    if shared == Path(shared.anchor) and home is not None and resolved.is_relative_to(home):
        return str(PurePosixPath("~", resolved.relative_to(home).as_posix()))
    return os.path.relpath(resolved, base)


def portable_text(text: str, folder: Path) -> str:
    """`text` (a spec, a command-line argument, a message) with each absolute path of this machine in it
    written by `portable_path`; a PostgreSQL URL as it is."""
    if "/" not in text or _POSTGRES.match(text):
        return text
    return _ABSOLUTE.sub(lambda match: _portable_match(match.group(0), folder), text)


def _portable_match(path: str, folder: Path) -> str:
    """A path of this machine: one that is there, or whose folder is (a file not made yet). Not one part alone
    ('/2' in '1 /2'), nor what only looks like a path ('/v1/chat/completions' in a server's error)."""
    if len([part for part in path.split("/") if part]) < 2:
        return path
    try:
        there = os.path.exists(path) or os.path.isdir(os.path.dirname(path))
    except (OSError, ValueError):
        there = False
    return portable_path(path, folder) if there else path


def portable_command(command: Sequence[str], folder: Path) -> list[str]:
    """A command line as a run file writes it: the program as `reso`, each argument by `portable_text`."""
    if not command:
        return []
    return [PROGRAM, *(portable_text(str(argument), folder) for argument in command[1:])]


def portable_value(value: Any, folder: Path) -> Any:
    """A setting's value by `portable_text` when it is a string, else as it is."""
    return portable_text(value, folder) if isinstance(value, str) else value


def resolved_in(folder: Path, value: str) -> str:
    """A path that a run file in `folder` wrote (`../data.jsonl`, `<reso>/…`, `~/…`) as a path to open from
    here; anything else (a registered dataset's name, a path that is not there) as it is."""
    if value.startswith(PACKAGE + "/"):
        return str(package_root() / value[len(PACKAGE) + 1:])
    if value.startswith("~/"):
        return str(Path(value).expanduser())
    if not value or os.path.isabs(value):
        return value
    candidate = folder / value
    return str(candidate.resolve()) if candidate.exists() else value
