"""The garbage collector's settings while a batch of questions runs (`reso.evals.runner.run_eval`).

A batch run keeps tens of questions in flight, each holding many short-lived objects across its awaits,
and it allocates fast. With CPython's defaults, the collector then scans those in-flight objects every 700
allocations and promotes them until full collections, which walk every object the process holds
(modules, the team, its index and models: hundreds of thousands), come every few dozen questions. In
`reso bench eval` that was a quarter of the run's CPU. So while a batch runs:

- the objects alive when it starts live for the whole run: they are frozen out of the collector's scans
  (`gc.freeze`);
- young collections come every `YOUNG_THRESHOLD` allocations instead of 700.

Nothing changes for objects freed by reference counting (almost all of them); reference cycles are only
found later. The previous settings come back when the last batch in the process ends (batches may run
concurrently, so the settings are counted, not simply saved and restored).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["YOUNG_THRESHOLD", "batch_collector"]

YOUNG_THRESHOLD = 20_000
"""Allocations between young collections during a batch (CPython's default: 700)."""

_lock = threading.Lock()
_active = 0
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def batch_collector() -> Iterator[None]:
    """The collector tuned for a batch for the duration of the block (see the module docstring)."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            gc.freeze()
            if _saved[0]:  # 0: automatic collection is off, and stays off
                gc.set_threshold(max(YOUNG_THRESHOLD, _saved[0]), *_saved[1:])
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                gc.set_threshold(*_saved)
                gc.unfreeze()
