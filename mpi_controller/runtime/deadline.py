"""A reschedulable deadline on an injected :class:`~mpi_controller.runtime.clock.Clock`.

``asyncio.timeout`` reads the loop's clock, which tests cannot move; this one reads a
:class:`Clock`, so a :class:`~mpi_controller.runtime.clock.ManualClock` can expire it exactly.

Contract:

* ``async with Deadline(clock, seconds) as d:`` cancels the enclosing task once ``clock.now()``
  passes the deadline, and turns that cancellation into :class:`DeadlineExceeded` on exit.
* ``d.touch()`` moves the deadline to ``now + seconds`` (an inactivity timer). It only stores a
  float; the timer re-arms itself lazily, so touching on every event is cheap.
* A cancellation that did not come from the deadline (or arrived as well) propagates unchanged:
  ``CancelledError`` is never swallowed.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from mpi_controller.runtime.clock import Clock, TimerHandle

__all__ = ["Deadline", "DeadlineExceeded"]


class DeadlineExceeded(TimeoutError):
    """The block did not finish (or was not touched) before its deadline."""


class Deadline:
    """Cancel the current task when ``seconds`` pass without :meth:`touch`."""

    def __init__(self, clock: Clock, seconds: float) -> None:
        self._clock = clock
        self._seconds = seconds
        self._last = 0.0
        self._task: asyncio.Task[object] | None = None
        self._handle: TimerHandle | None = None
        self._expired = False
        self._active = False
        self._cancelling = 0

    @property
    def expired(self) -> bool:
        return self._expired

    def touch(self) -> None:
        """Push the deadline to ``now + seconds``."""
        self._last = self._clock.now()

    async def __aenter__(self) -> Deadline:
        self._task = asyncio.current_task()
        if self._task is None:
            raise RuntimeError("Deadline must be used inside a task")
        self._cancelling = self._task.cancelling()
        self._active = True
        self._last = self._clock.now()
        self._arm()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._active = False
        if self._handle is not None:
            self._handle.cancel()
        if not self._expired:
            return
        assert self._task is not None
        if self._task.uncancel() <= self._cancelling and exc_type is asyncio.CancelledError:
            raise DeadlineExceeded(f"no progress for {self._seconds}s") from exc

    def _arm(self) -> None:
        self._handle = self._clock.call_at(self._last + self._seconds, self._fire)

    def _fire(self) -> None:
        if not self._active or self._expired:
            return
        if self._clock.now() < self._last + self._seconds:
            self._arm()
            return
        self._expired = True
        assert self._task is not None
        self._task.cancel()
