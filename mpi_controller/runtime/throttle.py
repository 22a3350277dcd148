"""The client-side token bucket every API request passes: :class:`RequestThrottle`.

client-go's client-side flowcontrol hands tokens out first come, first served. Here a
request that has to wait is served by **priority** instead (the :data:`REQUEST_PRIORITY`
context variable when it called :meth:`RequestThrottle.acquire`; lower first, equal ones in
arrival order), at the same rate: with many jobs' syncs in flight at once, the requests of the
job first seen go first, so jobs get their objects one after another (a per-job order) rather
than all of them a little at a time (breadth-first), and the median job is not behind.
A job's Events carry its priority too (:mod:`~mpi_controller.runtime.events`); requests
made outside any sync (Lease renewals, informers' lists) have priority :data:`URGENT` and go
before any job's.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from contextvars import ContextVar

from mpi_controller.runtime.clock import Clock, TimerHandle
from mpi_controller.runtime.ratelimit import BucketRateLimiter

__all__ = ["REQUEST_PRIORITY", "URGENT", "RequestThrottle"]

URGENT = -1
"""The priority of a request made outside any job's sync."""

REQUEST_PRIORITY: ContextVar[int] = ContextVar("request_priority", default=URGENT)
"""The priority of the requests the current task makes (lower goes first); the engine sets
it to the order its job was first seen in for the length of the job's sync."""


class RequestThrottle:
    """A token bucket (a :class:`~mpi_controller.runtime.ratelimit.BucketRateLimiter`:
    ``burst`` tokens, refilled at ``qps`` per second) whose waiting requests are served by
    :data:`REQUEST_PRIORITY` (module doc). A request passes at once while tokens remain and
    nobody waits; else it waits in a heap, and one timer at a time reserves the next token and
    releases the best waiter when the token is due. ``qps <= 0`` turns it off."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self._clock = clock
        self._bucket = BucketRateLimiter(qps, max(burst, 1), clock=clock) if qps > 0 else None
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._timer: TimerHandle | None = None

    async def acquire(self) -> None:
        if self._bucket is None:
            return
        if self._timer is None and not self._waiting:
            delay = self._bucket.when(None)
            if delay <= 0:
                return
            self._timer = self._clock.call_at(self._clock.now() + delay, self._release)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (REQUEST_PRIORITY.get(), next(self._order), fut))
        await fut  # a cancelled waiter stays in the heap; _release skips it

    def _release(self) -> None:
        """The reserved token is due: hand it to the best live waiter, reserve the next."""
        self._timer = None
        while self._waiting:
            _, _, fut = heapq.heappop(self._waiting)
            if not fut.done():
                fut.set_result(None)
                break
        while self._waiting and self._waiting[0][2].done():
            heapq.heappop(self._waiting)
        if self._waiting and self._bucket is not None:
            delay = self._bucket.when(None)
            self._timer = self._clock.call_at(self._clock.now() + delay, self._release)
