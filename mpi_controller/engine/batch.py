"""Pod updates held back for the batch window, one timer per job key.

Contract (:class:`HeldSyncs`):

* :meth:`HeldSyncs.hold` ``(key, seconds)``: ``fire(key)`` is called once ``seconds`` have
  passed on the clock. A key already held keeps the earlier of its deadline and the new one,
  so the updates of a job that arrive within the window cost one call.
* :meth:`HeldSyncs.release` ``(key)``: the held call of ``key`` is dropped. The engine
  releases a key when a sync of it starts. The updates held for it are already in the cache
  that sync reads, so a sync after the window would only read them again. An update after
  the sync's start holds the key afresh.
* Shutdown of the queue is not this class's business: a call fired after it enqueues
  nothing (the queue takes no adds then).

Unlike the work queue's own delayed adds (requeues a sync asked for, rate-limited retries),
nothing here is ever dropped except by :meth:`release`, whose sync covers it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from mpi_controller.runtime.clock import Clock, TimerHandle

__all__ = ["HeldSyncs"]


class HeldSyncs:
    """Per-key held calls of ``fire`` (see the module doc)."""

    def __init__(self, clock: Clock, fire: Callable[[str], None]) -> None:
        self._clock = clock
        self._fire = fire
        self._held: dict[str, tuple[float, TimerHandle]] = {}

    def hold(self, key: str, seconds: float) -> None:
        """Call ``fire(key)`` in ``seconds``, unless an earlier call is already held."""
        due = self._clock.now() + seconds
        held = self._held.get(key)
        if held is not None:
            if held[0] <= due:
                return
            held[1].cancel()
        self._held[key] = (due, self._clock.call_at(due, partial(self._due, key)))

    def release(self, key: str) -> None:
        """Drop the held call of ``key`` (a sync of it has started)."""
        held = self._held.pop(key, None)
        if held is not None:
            held[1].cancel()

    def __contains__(self, key: object) -> bool:
        return key in self._held

    def __len__(self) -> int:
        return len(self._held)

    def _due(self, key: str) -> None:
        self._held.pop(key, None)
        self._fire(key)
