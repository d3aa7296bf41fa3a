"""Path options checked before a command starts its work: one `error:` line and exit code 2 (as `fail`
prints them) for a folder that is a file, a file that is a folder, a file to read that is missing, or a path
beneath a file, rather than an `OSError` and a traceback seconds or minutes in.

Each check takes the option's name as the user typed it, so the line names the option and the path:
`error: --out afile.txt: not a folder`.
"""

from __future__ import annotations

from pathlib import Path

from reso.evals.cli.errors import fail


def _file_above(path: Path) -> Path | None:
    """The nearest existing path above `path` when it is not a folder (nothing can be made beneath it)."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def out_folder(option: str, path: Path | None) -> None:
    """A folder the command writes into, made when missing: refused when it, or a path above it, is a file."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        fail(f"{option} {path}: not a folder")
    above = _file_above(path)
    if above is not None:
        fail(f"{option} {path}: not a folder ({above} is a file)")


def out_file(option: str, path: Path | None) -> None:
    """A file the command writes (its folders made when missing): refused when it is a folder, or a path
    above it is a file."""
    if path is None:
        return
    if path.is_dir():
        fail(f"{option} {path}: a folder, not a file")
    above = _file_above(path)
    if above is not None:
        fail(f"{option} {path}: cannot be made ({above} is a file, not a folder)")


def in_folder(option: str, path: Path | None) -> None:
    """A folder the command reads: refused when it is missing or not a folder."""
    if path is None:
        return
    if not path.exists():
        fail(f"{option} {path}: no such folder")
    if not path.is_dir():
        fail(f"{option} {path}: not a folder")
