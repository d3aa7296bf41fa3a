"""What a test needs from outside the repository: the shared data (`../shared/data`), a server (PostgreSQL,
Chromium), or an installed extra such as Ray.

Where one is missing, `unavailable(reason)` skips the test with the reason on a developer's machine, and
fails it under CI (the environment variable `CI` set to `true` or `1`, as CI services set it; `.ci/run`
sets it too), so that CI never passes with a group of tests quietly left out. Tests that are optional by
design (an opt-in slow test, a GPU, the llama-cpp-python wheel that `.ci/run` may fail to build) skip with
`pytest.skip` as usual; `pytest -rs` names them all.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import NoReturn

import pytest

__all__ = ["in_ci", "require_module", "unavailable"]


def in_ci() -> bool:
    """Whether this run is CI's: `CI` is `true` or `1`."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def unavailable(reason: str) -> NoReturn:
    """The test cannot run here for `reason`: skip it, or under CI fail it with the reason."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: what a test needs must be there)", pytrace=False)
    pytest.skip(reason)


def require_module(name: str, reason: str) -> ModuleType:
    """The module `name`, imported; where it does not import, `unavailable(reason)`."""
    try:
        return pytest.importorskip(name, reason=reason)
    except pytest.skip.Exception:
        unavailable(reason)
