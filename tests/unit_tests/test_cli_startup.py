"""`reso --help` stays fast: the CLI module imports none of the heavy libraries until a command needs them, and
neither does drawing the help."""

from __future__ import annotations

import os
import subprocess
import sys

HEAVY = ("torch", "transformers", "faiss", "sentence_transformers", "sklearn", "scipy", "sympy", "numpy",
         "langgraph", "langchain_core", "langchain_openai", "openai", "tiktoken", "math_verify", "pydantic")


def _env() -> dict[str, str]:
    # A bare environment (no terminal width or colour surprises); PYTHONPATH kept for uninstalled checkouts.
    return {"COLUMNS": "120", "PATH": "", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}


def _loaded_after(code: str) -> list[str]:
    """The heavy libraries loaded once `code` has run in a fresh interpreter."""
    probe = f"import sys\n{code}\nprint('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("loaded:"))
    return [name for name in line.removeprefix("loaded:").split(",") if name]


def test_cli_import_loads_no_heavy_library():
    assert _loaded_after("import reso.evals.cli") == []


def test_drawing_the_help_loads_no_heavy_library():
    assert _loaded_after("from reso.evals.cli import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass") == []


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-c", "from reso.evals.cli import app; app(['--help'])"],
                         capture_output=True, text=True, env=_env())
    for command in ("solve", "plan", "eval", "demo", "compare", "teams", "pool", "crm", "bench", "synth"):
        assert f" {command} " in out.stdout


def test_the_module_runs_as_the_reso_command():
    out = subprocess.run([sys.executable, "-m", "reso.evals.cli", "bench", "--help"], capture_output=True, text=True,
                         env=_env())
    assert out.returncode == 0, out.stderr
    assert " startup " in out.stdout and " eval " in out.stdout
