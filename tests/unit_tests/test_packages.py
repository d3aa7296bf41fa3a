"""Each package says what it is and exports its public names, loaded on first use: importing a package
loads no heavy library, and every exported name resolves to the object its module defines."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

PACKAGES = ("reso.agents", "reso.agents.adapters", "reso.agents.dadb", "reso.agents.selection", "reso.graphs",
            "reso.reward", "reso.reward.training", "reso.evals", "reso.evals.backends", "reso.evals.cli",
            "reso.evals.reports", "reso.evals.synth")
HEAVY = ("torch", "transformers", "faiss", "sentence_transformers", "sklearn", "langgraph", "langchain_core")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves_to_its_modules_object(name):
    package = importlib.import_module(name)
    assert package.__doc__ and "placeholder" not in package.__doc__
    # The lazy loader's table (what `dir` lists) and the declared `__all__` name the same objects.
    assert set(dir(package)) == set(package.__all__)
    for exported in package.__all__:
        value = getattr(package, exported)
        assert not isinstance(value, types.ModuleType), f"{name}.{exported} is shadowed by a submodule"
        assert package.__dict__[exported] is value  # cached on the package after the first use
    with pytest.raises(AttributeError, match="No .* attribute nothing_here"):
        package.nothing_here  # noqa: B018


@pytest.mark.parametrize("name", PACKAGES)
def test_no_exported_name_is_also_a_submodule(name):
    # Importing `package.x` sets the attribute `x` to the module, replacing an exported object of that name.
    package = importlib.import_module(name)
    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert submodules and not submodules & set(package.__all__)


def test_the_cli_package_exports_the_console_scripts_app():
    import typer

    from reso.evals.cli.main import app

    cli = importlib.import_module("reso.evals.cli")
    assert isinstance(cli.app, typer.Typer) and cli.app is app


def test_importing_the_packages_loads_no_heavy_library():
    probe = (f"import sys; import {', '.join(PACKAGES)}; "
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""
