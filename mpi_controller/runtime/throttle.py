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

Priority alone would starve: older jobs that keep asking for more than the rate (pods that
fail and restart forever) would hold every newer job's requests back for as long as they
ran. So a request that has waited :data:`MAX_WAIT` seconds or more goes before the others,
oldest first, whatever its priority (:data:`URGENT` ones aside, which are few): no request
waits much longer than that plus the queue of such late ones ahead of it, and under a load
the rate cannot carry the order ends as client-go's, first come first served.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from contextvars import ContextVar

from mpi_controller.runtime.clock import Clock, TimerHandle
from mpi_controller.runtime.ratelimit import BucketRateLimiter

__all__ = ["MAX_WAIT", "REQUEST_PRIORITY", "URGENT", "RequestThrottle"]

MAX_WAIT = 2.0
"""Seconds after which a waiting request goes before any priority (module doc)."""

URGENT = -1
"""The priority of a request made outside any job's sync."""

REQUEST_PRIORITY: ContextVar[int] = ContextVar("request_priority", default=URGENT)
"""The priority of the requests the current task makes (lower goes first); the engine sets
it to the order its job was first seen in for the length of the job's sync."""


class RequestThrottle:
    """A token bucket (a :class:`~mpi_controller.runtime.ratelimit.BucketRateLimiter`:
    ``burst`` tokens, refilled at ``qps`` per second) whose waiting requests are served by
    :data:`REQUEST_PRIORITY` (module doc). A request passes at once while tokens remain and
    nobody waits; else it waits in a heap by priority and in a line by arrival, and one timer
    at a time reserves the next token and releases, when the token is due, the first in line
    if it has waited ``max_wait`` seconds, else the best by priority. ``qps <= 0`` turns it
    off."""

    def __init__(self, qps: float, burst: int, clock: Clock, *,
                 max_wait: float = MAX_WAIT) -> None:
        self._clock = clock
        self._bucket = BucketRateLimiter(qps, max(burst, 1), clock=clock) if qps > 0 else None
        self.max_wait = max_wait
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._line: deque[tuple[float, asyncio.Future[None]]] = deque()
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
        self._line.append((self._clock.now(), fut))
        await fut  # a cancelled waiter stays in the heap and the line; _release skips it

    def _release(self) -> None:
        """The reserved token is due: hand it to an :data:`URGENT` waiter, else to the first
        in line if it has waited ``max_wait``, else to the best waiter by priority; reserve
        the next."""
        self._timer = None
        line, waiting = self._line, self._waiting
        self._drop_done()
        if line and waiting[0][0] != URGENT and self._clock.now() - line[0][0] >= self.max_wait:
            line.popleft()[1].set_result(None)
        elif waiting:
            heapq.heappop(waiting)[2].set_result(None)
        self._drop_done()
        if self._waiting and self._bucket is not None:
            delay = self._bucket.when(None)
            self._timer = self._clock.call_at(self._clock.now() + delay, self._release)

    def _drop_done(self) -> None:
        """Leave no served or cancelled waiter at the front of the heap or the line (both
        hold every live waiter, so both are empty or both have a live one in front)."""
        line, waiting = self._line, self._waiting
        while waiting and waiting[0][2].done():
            heapq.heappop(waiting)
        while line and line[0][1].done():
            line.popleft()
