"""Setting a context variable for the duration of a block, tolerant of being closed from elsewhere.

The engine hands run-scoped objects (the live DAG run, the run budget, the update sink) to the tasks it
starts through context variables. When a caller abandons a stream, the block's cleanup can run in another
context, where resetting the token raises; there is nothing to restore in that context, so it is skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextlib.contextmanager
def scoped(variable: ContextVar[T], value: T) -> Iterator[T]:
    """`variable` holds `value` inside the block (and the tasks started there)."""
    token = variable.set(value)
    try:
        yield value
    finally:
        with contextlib.suppress(ValueError):
            variable.reset(token)
