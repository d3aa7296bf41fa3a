"""The synchronous API's background loop: one loop on one daemon thread, serving every call of the process."""

from __future__ import annotations

import asyncio
import threading

import pytest

from reso.graphs.background_loop import BackgroundLoop


async def _where() -> tuple[asyncio.AbstractEventLoop, str]:
    return asyncio.get_running_loop(), threading.current_thread().name


def test_every_call_runs_on_the_same_loop_on_its_own_thread() -> None:
    loop = BackgroundLoop("test-loop")
    first, second = loop.run(_where()), loop.run(_where())
    assert first == second and first[1] == "test-loop" and not first[0].is_closed()


def test_a_failing_coroutine_raises_in_the_caller_and_the_loop_keeps_serving() -> None:
    async def fail() -> None:
        raise ValueError("no")

    loop = BackgroundLoop("test-loop-2")
    with pytest.raises(ValueError, match="no"):
        loop.run(fail())
    assert loop.run(_where())[1] == "test-loop-2"
