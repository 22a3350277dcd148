"""Work queues with client-go's semantics (``util/workqueue``), for one asyncio event loop.

State of a :class:`Queue`: ``queue`` (FIFO of items waiting to be handed out), ``dirty`` (items
that need processing) and ``processing`` (items handed out by :meth:`Queue.get` and not yet
:meth:`Queue.done`). Invariant: every item in ``queue`` is in ``dirty`` and not in ``processing``.
Items are hashable keys (``"namespace/name"`` strings in practice) and never ``None``.

* ``add`` of an item that is already dirty is a no-op (duplicates coalesce). An item added while
  it is being processed is only marked dirty; ``done`` puts it back in the queue. So an item is
  never held by two workers at once, and work added during processing is not lost.
* ``get`` waits for an item. After shutdown it still hands out what is queued and then returns
  ``(None, True)``.
* ``shut_down`` stops accepting adds and wakes every waiter; ``shut_down_with_drain`` also waits
  until no item is being processed (``shut_down`` afterwards aborts that wait).
* Only ``get`` and ``shut_down_with_drain`` are coroutines; every other call is a plain,
  non-blocking function (all callers share one event loop, so no locks are needed). With the
  default :class:`~mpi_controller.runtime.clock.LoopClock`, call them from inside the running
  loop (delays and metrics read its time).

:class:`DelayingQueue` adds ``add_after(item, seconds)``: ``seconds <= 0`` adds at once; else the
item waits on a clock timer. An item waits at most once: a new, earlier deadline replaces the
old one, a later one is ignored. ``cancel_delayed(item)`` drops an item's wait (not the item if
it is already queued). Shutdown discards waiting items.

:class:`RateLimitingQueue` adds ``add_rate_limited`` (``add_after`` with the rate limiter's
delay), ``forget`` and ``num_requeues``; ``forget`` only clears the limiter's history, the caller
still has to call ``done``.

Deliberate difference from client-go: ``done`` of an item that is not being processed is
ignored (client-go would queue a dirty item a second time, breaking the invariant).

With ``name=...`` the queue reports the ``workqueue_*`` metrics of
:mod:`mpi_controller.runtime.metrics` under that name; the in-flight gauges are refreshed every
0.5 s by a clock timer that starts with the first add and stops at shutdown. Unnamed queues
report nothing.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Hashable
from functools import partial
from typing import Generic, TypeVar

from mpi_controller.runtime.clock import Clock, LoopClock, TimerHandle
from mpi_controller.runtime.metrics import QueueMetrics
from mpi_controller.runtime.ratelimit import RateLimiter, default_controller_rate_limiter

__all__ = ["UNFINISHED_WORK_UPDATE_PERIOD", "DelayingQueue", "Queue", "RateLimitingQueue"]

UNFINISHED_WORK_UPDATE_PERIOD = 0.5
"""Seconds between refreshes of the in-flight gauges (client-go's default)."""

T = TypeVar("T", bound=Hashable)


class Queue(Generic[T]):
    """A deduplicating FIFO work queue with per-item serialization."""

    def __init__(self, *, name: str | None = None, clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else LoopClock()
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._shutting_down = False
        self._drain = False
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drainers: list[asyncio.Future[None]] = []
        self._metrics = QueueMetrics(name, clock=self._clock) if name else None
        self._ticker: TimerHandle | None = None

    # -- producer side ---------------------------------------------------------------------

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing (ignored after shutdown or if already dirty)."""
        if self._shutting_down or item in self._dirty:
            return
        if self._metrics is not None:
            self._metrics.add(item)
            self._start_ticker()
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one_getter()

    # -- consumer side ---------------------------------------------------------------------

    async def get(self) -> tuple[T | None, bool]:
        """Wait for an item: ``(item, False)``, or ``(None, True)`` once shut down and empty."""
        while not self._queue:
            if self._shutting_down:
                return None, True
            await self._wait_for_item()
        item = self._queue.popleft()
        if self._metrics is not None:
            self._metrics.get(item)
        self._processing.add(item)
        self._dirty.discard(item)
        return item, False

    def done(self, item: T) -> None:
        """Finish processing ``item``; re-queue it if it was added meanwhile."""
        if item not in self._processing:
            return
        if self._metrics is not None:
            self._metrics.done(item)
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one_getter()
        elif not self._processing:
            self._wake_drainers()

    # -- introspection and lifecycle -------------------------------------------------------

    def len(self) -> int:
        """Number of items waiting to be handed out (excludes items being processed)."""
        return len(self._queue)

    def __len__(self) -> int:
        return len(self._queue)

    def in_flight(self) -> int:
        """Number of items handed out by :meth:`get` and not yet :meth:`done`."""
        return len(self._processing)

    def shutting_down(self) -> bool:
        """Whether shutdown has begun."""
        return self._shutting_down

    def shut_down(self) -> None:
        """Stop accepting adds; ``get`` hands out what is queued, then reports shutdown."""
        self._drain = False
        self._shut_down()

    async def shut_down_with_drain(self) -> None:
        """Like :meth:`shut_down`, then wait until no item is being processed."""
        self._drain = True
        self._shut_down()
        while self._processing and self._drain:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drainers.append(fut)
            try:
                await fut
            finally:
                if fut in self._drainers:
                    self._drainers.remove(fut)

    # -- internals -------------------------------------------------------------------------

    def _shut_down(self) -> None:
        self._shutting_down = True
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        while self._getters:
            self._resolve(self._getters.popleft())
        self._wake_drainers()

    async def _wait_for_item(self) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._getters.append(fut)
        try:
            await fut
        except BaseException:
            fut.cancel()
            if fut in self._getters:
                self._getters.remove(fut)
            if self._queue and not fut.cancelled():
                self._wake_one_getter()  # pass on a wake-up this cancelled getter consumed
            raise

    def _wake_one_getter(self) -> None:
        while self._getters:
            fut = self._getters.popleft()
            if not fut.done():
                fut.set_result(None)
                return

    def _wake_drainers(self) -> None:
        drainers, self._drainers = self._drainers, []
        for fut in drainers:
            self._resolve(fut)

    @staticmethod
    def _resolve(fut: asyncio.Future[None]) -> None:
        if not fut.done():
            fut.set_result(None)

    def _start_ticker(self) -> None:
        if self._ticker is None and not self._shutting_down:
            when = self._clock.now() + UNFINISHED_WORK_UPDATE_PERIOD
            self._ticker = self._clock.call_at(when, self._tick)

    def _tick(self) -> None:
        self._ticker = None
        if self._shutting_down or self._metrics is None:
            return
        self._metrics.update_unfinished_work()
        self._start_ticker()


class DelayingQueue(Queue[T]):
    """A :class:`Queue` whose items can be added after a delay."""

    def __init__(self, *, name: str | None = None, clock: Clock | None = None) -> None:
        super().__init__(name=name, clock=clock)
        self._waiting: dict[T, tuple[float, TimerHandle | None]] = {}

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed; an earlier pending deadline wins."""
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retry()
        if seconds <= 0:
            self.add(item)
            return
        ready_at = self._clock.now() + seconds
        pending = self._waiting.get(item)
        if pending is not None:
            if pending[0] <= ready_at:
                return
            if pending[1] is not None:
                pending[1].cancel()
        handle = None
        if not math.isinf(ready_at):
            handle = self._clock.call_at(ready_at, partial(self._ready, item))
        self._waiting[item] = (ready_at, handle)

    def cancel_delayed(self, item: T) -> bool:
        """Drop ``item``'s pending :meth:`add_after`; whether one was pending."""
        pending = self._waiting.pop(item, None)
        if pending is None:
            return False
        if pending[1] is not None:
            pending[1].cancel()
        return True

    def _ready(self, item: T) -> None:
        self._waiting.pop(item, None)
        self.add(item)

    def _shut_down(self) -> None:
        super()._shut_down()
        waiting, self._waiting = self._waiting, {}
        for _, handle in waiting.values():
            if handle is not None:
                handle.cancel()


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`DelayingQueue` that delays retries with a :class:`RateLimiter`.

    The default limiter is :func:`default_controller_rate_limiter` on the queue's clock.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter | None = None,
        *,
        name: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock)
        if rate_limiter is None:
            rate_limiter = default_controller_rate_limiter(clock=self._clock)
        self._limiter = rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter gives for one more failure."""
        self.add_after(item, self._limiter.when(item))

    def forget(self, item: T) -> None:
        """Clear the limiter's history of ``item`` (the caller still calls :meth:`done`)."""
        self._limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Failures of ``item`` on record in the rate limiter."""
        return self._limiter.num_requeues(item)
