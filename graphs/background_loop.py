"""A process's one background event loop, on which the synchronous API (`ReSo.solve`) runs coroutines.

Not `asyncio.run`: provider SDKs (openai's httpx client) are cached per process and their connection pools
belong to the loop that first used them, so with a new loop per call every second `solve()` on an HTTP
endpoint failed with "Event loop is closed". Teams, and so models, are shared across calls, so the loop
that serves them is shared too: `SYNC_LOOP`, started on first use.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """An event loop running on a daemon thread of its own, started by the first `run`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name=self.name, daemon=True).start()
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run `coroutine` to the end on this loop and return its result (blocking the calling thread)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._started())
        try:
            return future.result()
        except BaseException:  # KeyboardInterrupt included: stop the run rather than leave it going
            future.cancel()
            raise


SYNC_LOOP = BackgroundLoop("reso-sync-loop")
"""The loop of every synchronous call in this process (see the module)."""
