"""What the Ray workers of one run share: the run's spending (for its budget) and the models' rate limits.

Each is a small Ray actor, one per run, whose handle the workers receive; the classes here are plain
Python (wrapped by `ray.remote` where the run starts them, `reso.evals.backends.ray_backend`), so this module imports
without Ray.

- `SpendLedger`: the run's tokens and USD, summed over every worker's calls, and the time since the run
  began. A worker's run budget (`SharedRunBudget`) is its view of the ledger: what the ledger said last plus
  what the worker spent since, so a worker refuses calls once the run is spent, give or take the calls in
  flight elsewhere.
- `RateLimits`: a model's `params.requests_per_second` bucket, one for the whole cluster instead of one per
  process. `share_rate_limits` swaps each worker model's own limiter for a `ClusterRateLimiter` that asks it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from langchain_core.rate_limiters import BaseRateLimiter, InMemoryRateLimiter

from reso.agents.adapters.loader import RATE_LIMIT_PARAMS
from reso.graphs.budget import RUN_SCOPE, Budget
from reso.graphs.team import Team

__all__ = ["ClusterRateLimiter", "RateLimits", "SharedRunBudget", "SpendLedger", "share_rate_limits"]

Totals = tuple[int, float]


class SpendLedger:
    """A run's spending across workers, starting from what its results already cost (a resumed run)."""

    def __init__(self, tokens: int, usd: float, elapsed_s: float) -> None:
        self.tokens = tokens
        self.usd = usd
        self._started = time.monotonic() - elapsed_s

    def spend(self, tokens: int, usd: float) -> Totals:
        """Add one call's spending; returns the run's totals after it."""
        self.tokens += tokens
        self.usd += usd
        return self.tokens, self.usd

    def totals(self) -> Totals:
        return self.tokens, self.usd

    def elapsed_s(self) -> float:
        """Seconds since the run began (on the ledger's clock, which every worker reads the same)."""
        return time.monotonic() - self._started


@dataclass
class SharedRunBudget(Budget):
    """A worker's run budget: the run's limits, checked against the ledger's totals as last seen plus this
    worker's spending not yet acknowledged. Each spend is sent to the ledger, whose answer refreshes the view.

    `spend` is called on the worker's event loop (by the fine stage, after each call), so the
    acknowledgements are tasks on that loop; `flush` waits for them before a result leaves the worker, so
    that the driver, reading the ledger after the result, sees every call of it."""

    ledger: Any = field(default=None, repr=False)
    _seen: Totals = field(default=(0, 0.0), init=False, repr=False)
    _pending_tokens: int = field(default=0, init=False, repr=False)
    _pending_usd: float = field(default=0.0, init=False, repr=False)
    _acks: set[asyncio.Task[None]] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        self.scope = RUN_SCOPE
        self._seen = (self.tokens, self.usd)

    def spend(self, tokens: int, usd: float) -> None:
        self._pending_tokens += tokens
        self._pending_usd += usd
        self._show()
        task = asyncio.get_running_loop().create_task(self._ack(tokens, usd))
        self._acks.add(task)
        task.add_done_callback(self._acks.discard)

    async def _ack(self, tokens: int, usd: float) -> None:
        totals = await self.ledger.spend.remote(tokens, usd)
        self._pending_tokens -= tokens
        self._pending_usd -= usd
        self.see(totals)

    def see(self, totals: Totals) -> None:
        """Take the ledger's totals into the view (never backwards: answers may arrive out of order)."""
        self._seen = (max(self._seen[0], int(totals[0])), max(self._seen[1], float(totals[1])))
        self._show()

    def _show(self) -> None:
        self.tokens = self._seen[0] + self._pending_tokens
        self.usd = self._seen[1] + self._pending_usd

    async def refresh(self) -> None:
        """Read the ledger's totals now (before a question starts)."""
        self.see(await self.ledger.totals.remote())

    async def flush(self) -> None:
        """Wait until the ledger has every call this worker spent on."""
        while self._acks:
            await asyncio.gather(*list(self._acks))


class RateLimits:
    """Token buckets by model, shared by every worker (an async actor: waiting callers do not block others)."""

    def __init__(self) -> None:
        self._buckets: dict[str, InMemoryRateLimiter] = {}

    async def acquire(self, key: str, params: dict[str, float], blocking: bool = True) -> bool:
        """Take one request from the bucket of `key` (made from `params` on first use); False when it is empty
        and `blocking` is off."""
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = InMemoryRateLimiter(**params)
        return await bucket.aacquire(blocking=blocking)


class ClusterRateLimiter(BaseRateLimiter):
    """A model's rate limiter that takes its requests from the cluster's `RateLimits` actor."""

    def __init__(self, limits: Any, key: str, params: dict[str, float]) -> None:
        self.limits = limits
        self.key = key
        self.params = params

    def acquire(self, *, blocking: bool = True) -> bool:
        import ray

        return bool(ray.get(self.limits.acquire.remote(self.key, self.params, blocking)))

    async def aacquire(self, *, blocking: bool = True) -> bool:
        return bool(await self.limits.acquire.remote(self.key, self.params, blocking))


def share_rate_limits(team: Team, limits: Any) -> int:
    """Give every model of `team` that has a rate limit (`params.requests_per_second`) the cluster's bucket
    for its model spec instead of its own; returns how many models were changed."""
    changed = 0
    for agent in team.pool:
        params = {key: float(agent.model.params[key]) for key in RATE_LIMIT_PARAMS if key in agent.model.params}
        model = team.models.get(agent.id)
        inner = getattr(model, "inner", model)  # a fault-injecting wrapper holds the limited model
        if not params or inner is None or not isinstance(getattr(inner, "rate_limiter", None), InMemoryRateLimiter):
            continue
        # The same key as the process-wide sharing (`reso.agents.adapters.invoke.ModelCache`): the model spec.
        key = agent.model.model_dump_json(exclude={"name", "price_in", "price_out"})
        inner.rate_limiter = ClusterRateLimiter(limits, key, params)
        changed += 1
    return changed
