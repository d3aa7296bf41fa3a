"""Packaging: every folder of Python files under the four top-level packages installs, and every data file
the package reads ships with it. pyproject.toml lists the subpackages by hand (they install under the `reso`
namespace through a package-dir table, which setuptools' package discovery cannot map), so a new folder or
data file that is not listed would silently be missing from an install; this test names it instead."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("agents", "graphs", "reward", "evals")


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _python_folders() -> set[str]:
    found = set()
    for top in TOP:
        for source in (ROOT / top).rglob("*.py"):
            if "__pycache__" not in source.parts:
                found.add("reso." + ".".join(source.parent.relative_to(ROOT).parts))
    return found


def test_every_folder_of_python_files_is_an_installed_package():
    listed = set(_setuptools()["packages"])
    assert _python_folders() - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - _python_folders() == set(), "these listed packages have no Python files"
    assert {f"reso.{top}": top for top in TOP}.items() <= _setuptools()["package-dir"].items()


def test_every_data_file_of_a_package_ships_with_it():
    package_data = _setuptools()["package-data"]
    unshipped = []
    for package in _python_folders():
        folder = ROOT.joinpath(*package.split(".")[1:])
        patterns = package_data.get(package, [])
        for path in folder.iterdir():
            if path.is_file() and path.suffix not in (".py", ".pyc") and \
                    not any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns):
                unshipped.append(str(path.relative_to(ROOT)))
    assert unshipped == [], "add patterns for these to [tool.setuptools.package-data] in pyproject.toml"
