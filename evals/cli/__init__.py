"""The `reso` command line: one Typer `app` (`main.py`) and a module per sub-command (`solve.py`, `plan.py`,
`eval.py`, `demo.py`, `compare.py`, `pool.py`, `crm.py`, `synth.py`; `reso bench` lives in
`reso.evals.bench.cli`), with the live progress views they draw (`progress.py` for `reso solve`,
`progress_bar.py` for `reso eval`).

`app` is the console script (`reso = "reso.evals.cli:app"`) and `python -m reso.evals.cli` runs it too.
It is imported on first use, and the sub-commands import heavy libraries only when they run, so
`reso --help` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reso.evals.cli.main import app

_EXPORTS: dict[str, str] = {
    "app": "reso.evals.cli.main",
}

__all__ = [
    "app",
]


def __getattr__(name: str) -> Any:
    # Imported on first use (PEP 562), so importing the package loads none of its heavy dependencies.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
