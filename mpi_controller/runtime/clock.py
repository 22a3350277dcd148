"""Injected monotonic time for the runtime.

Every deadline, delay and backoff in ``mpi_controller.runtime`` reads time through a
:class:`Clock`, never ``time.time()``. Production code uses :class:`LoopClock` (the running
event loop's monotonic ``loop.time()``); tests use :class:`ManualClock`, whose time moves only
when the test calls :meth:`ManualClock.advance`, so delays can be asserted exactly.

Contract:

* ``now()`` is monotonic, in seconds, with an arbitrary origin.
* ``sleep(d)`` returns once ``now()`` has moved by at least ``d``; ``d <= 0`` yields once.
* ``call_at(when, fn)`` runs ``fn()`` (plain, non-blocking) once ``now() >= when``; the returned
  handle's ``cancel()`` prevents a call that has not run yet.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "LoopClock", "ManualClock", "TimerHandle"]


class TimerHandle(Protocol):
    """A scheduled call that can be cancelled before it runs."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Monotonic time, sleeping and scheduled calls."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    def call_at(self, when: float, callback: Callable[[], object]) -> TimerHandle: ...


class LoopClock:
    """The running event loop's monotonic clock."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0.0))

    def call_at(self, when: float, callback: Callable[[], object]) -> TimerHandle:
        return asyncio.get_running_loop().call_at(when, callback)


class _ManualTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that moves only when :meth:`advance` is called (for tests).

    Timers and sleepers due at or before the new time fire in deadline order during
    :meth:`advance`; sleepers resume the next time the test awaits.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, _ManualTimer]] = []

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[], object]) -> TimerHandle:
        timer = _ManualTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._seq), timer))
        return timer

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not fut.done():
                fut.set_result(None)

        handle = self.call_at(self._now + seconds, wake)
        try:
            await fut
        finally:
            handle.cancel()

    def pending(self) -> int:
        """Number of timers and sleepers not yet fired or cancelled."""
        return sum(1 for _, _, t in self._timers if not t.cancelled)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, firing every timer that falls due, in order."""
        if seconds < 0:
            raise ValueError("a clock cannot go backwards")
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            when, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, when)
            if not timer.cancelled:
                timer.callback()
        self._now = target
