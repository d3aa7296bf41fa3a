"""`reso --help` stays fast: the CLI module imports none of the heavy libraries until a command needs them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("torch", "transformers", "faiss", "sentence_transformers", "sklearn", "langgraph", "langchain_core")


def test_cli_import_loads_no_heavy_library():
    probe = ("import sys, reso.evals.cli; "
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-c", "from reso.evals.cli import app; app(['--help'])"],
                         capture_output=True, text=True, env={"COLUMNS": "120", "PATH": ""})
    for command in ("solve", "plan", "eval", "demo", "pool", "crm", "bench", "synth"):
        assert f" {command} " in out.stdout
