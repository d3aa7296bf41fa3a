"""The general CRM fitted in a second process while the first benchmark trains and runs the baselines that
need no CRM, so the job's two busy parts (the engine's replay, the CRM fit) use two cores."""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import signal
from collections.abc import Callable, Iterator
from typing import Any

from reso.evals.jobs.config import WORLDS, DemoConfig, world_pool
from reso.evals.jobs.crm_fit import fit_general_crm
from reso.evals.jobs.events import GENERAL_CRM, DemoProgress, LogProgress
from reso.graphs.settings import ReSoSettings
from reso.graphs.team import team_for


def _fit_general_crm_here(config: DemoConfig, pool_spec: str) -> str | None:
    """`fit_general_crm` in a worker process (module-level, so a spawned process can import it). It prints
    nothing: the parent shows the fit (a line from here would cut into its display, or into its standard
    output, where `reso demo --json` writes its JSON)."""
    return fit_general_crm(config, team_for(ReSoSettings(pool=pool_spec)).pool, config.out / "crm-general",
                           lambda line: None)


def _worker_pool() -> Any:
    """One spawned worker process that ignores SIGINT: Ctrl-C in a terminal reaches the whole process group,
    and the parent alone answers it (it ends the worker and says what was saved), so the worker prints no
    traceback. SIGINT stays blocked while the worker starts (a blocked signal stays blocked in the child until
    its initializer ignores it; the parent gets a Ctrl-C of that moment once it is unblocked)."""
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return multiprocessing.get_context("spawn").Pool(1, initializer=signal.signal,
                                                         initargs=(signal.SIGINT, signal.SIG_IGN))
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def general_crm_in_background(config: DemoConfig,
                              progress: DemoProgress | None = None) -> Iterator[Callable[[], object]]:
    """With `--crm calibrated`, train the general CRM in a second process while the first benchmark
    trains and runs its baselines (the engine's replay is one busy core; the CRM fit is another), and
    yield a call that waits for it. The benchmarks' own `fit_general_crm` then finds it saved. A failure
    in the worker is raised by that call. `progress` hears when the fit starts and ends."""
    if config.crm != "calibrated":
        yield lambda: None
        return
    shown = progress or LogProgress(print)

    def ended(error: BaseException | None) -> None:
        # Called on the pool's result thread: an exception there would stop it, and the wait would never end.
        with contextlib.suppress(Exception):
            shown.background(GENERAL_CRM, running=False, error=None if error is None else str(error))

    pool_spec = world_pool(config, WORLDS[config.world][0])
    # spawn, not fork: the parent holds threads (the engine's worker threads, OpenMP) a fork would copy.
    # Leaving the block terminates the worker, so an error or Ctrl-C does not wait for the fit.
    with _worker_pool() as worker:
        shown.background(GENERAL_CRM, running=True)
        pending = worker.apply_async(_fit_general_crm_here,
                                     (dataclasses.replace(config, backend=None), pool_spec),
                                     callback=lambda _: ended(None), error_callback=ended)
        yield pending.get
