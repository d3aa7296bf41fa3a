"""The `reso` command line: one Typer `app` (`main.py`) and a module per sub-command (`solve.py`, `plan.py`,
`eval.py`, `demo.py`, `compare.py`, `pool.py`, `crm.py`, `synth.py`; `reso bench` lives in
`reso.evals.bench.cli`), with the live progress views they draw (`progress.py` for `reso solve`,
`progress_bar.py` for `reso eval`).

`app` is the console script (`reso = "reso.evals.cli:app"`) and `python -m reso.evals.cli` runs it too.
It is imported on first use, and the sub-commands import heavy libraries only when they run, so
`reso --help` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from reso.evals.cli.main import app

__all__ = [
    "app",
]

# Imported on first use (PEP 562, through lazy_loader), so importing the package loads none of its heavy
# dependencies.
__getattr__, __dir__, _ = lazy_loader.attach(__name__, submod_attrs={
    "main": ["app"],
})
