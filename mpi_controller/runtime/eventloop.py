"""The controller's event loop: messages that arrive close together handled in one wake-up.

A controller's CPU per job follows its wake-ups more than its messages: a process woken from a
wait runs its first work several times slower than the same work back to back (caches and
branch predictors refilled, the scheduler's switch; ``bench/watch_bench.py``: reading and
caching a pod watch event cost 460 us of CPU at 100 events a second, 88 at 5,000), and watch
events and answers come one or two at a time (docs/performance.md, "Fewer wake-ups").

Contract:

* :class:`GatheringSelector` is the platform's default selector (epoll on Linux) with one more
  mode. **Idle** (at first, and after a turn that found nothing): :meth:`~GatheringSelector.
  select` waits as the default selector does, so the first message after a pause is handled
  at once; finding something makes it **busy**. Busy, it returns what is already waiting at
  once (a loop that keeps up with its messages never sleeps: nothing to save, throughput
  kept); when nothing is, it sleeps ``min(window, timeout)`` and then polls without waiting,
  so whatever arrived meanwhile on any connection comes back for one turn; finding nothing
  then makes it idle again and it waits out the rest of the timeout as before. A
  ``select(0)`` (asyncio polls so while callbacks are ready) never sleeps. So while messages
  keep coming, each waits at most ``window`` seconds more, and a timer fires at most
  ``window`` late.
* :func:`new_event_loop` is an asyncio loop on a :class:`GatheringSelector` when ``window`` is
  positive, else the standard one.

``mpi-controller run`` uses a 10 ms window (``--wakeup-gather``): 20 and 30 ms halved the
wake-ups again but not the CPU per job, and a controller kept busy answered later (an arrival
job's ``t_children`` p50 ~0.1 to ~0.4 s; docs/performance.md, "The gathering window").
"""

from __future__ import annotations

import asyncio
import selectors
import time
from collections.abc import Callable

__all__ = ["GatheringSelector", "new_event_loop"]


class GatheringSelector(selectors.DefaultSelector):
    """The default selector, gathering messages while busy (see the module doc)."""

    def __init__(self, window: float, *, sleep: Callable[[float], None] = time.sleep) -> None:
        if window <= 0:
            raise ValueError(f"window must be positive, got {window:g}")
        super().__init__()
        self.window = window
        self.busy = False
        self._sleep = sleep

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is not None and timeout <= 0:
            return super().select(0)
        if self.busy:
            ready = super().select(0)
            if ready:  # already waiting: no wake-up to spare, no reason to wait
                return ready
            pause = self.window if timeout is None else min(self.window, timeout)
            self._sleep(pause)
            ready = super().select(0)
            if ready:
                return ready
            self.busy = False
            if timeout is not None:
                timeout -= pause
                if timeout <= 0:
                    return ready
        ready = super().select(timeout)
        self.busy = bool(ready)
        return ready


def new_event_loop(window: float) -> asyncio.AbstractEventLoop:
    """An event loop gathering messages for up to ``window`` seconds while busy; the standard
    loop when ``window`` is 0 (see the module doc)."""
    if window <= 0:
        return asyncio.new_event_loop()
    return asyncio.SelectorEventLoop(GatheringSelector(window))
