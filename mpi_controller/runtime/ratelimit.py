"""Rate limiters for work queues, with client-go's semantics (``default_rate_limiters.go``).

A :class:`RateLimiter` answers "how long should this item wait before it is retried?":

* ``when(item)`` records one more failure of ``item`` and returns the delay in seconds;
* ``forget(item)`` clears the item's history (the caller still has to ``done`` it in the queue);
* ``num_requeues(item)`` is how many failures are on record for the item.

Implementations:

* :class:`ItemExponentialFailureRateLimiter` — ``base * 2**n`` where ``n`` is the failure count
  read *before* this call increments it (5 ms, 10 ms, 20 ms, ...), capped at ``max_delay`` and
  safe against float overflow.
* :class:`ItemFastSlowRateLimiter` — ``fast`` for the first ``max_fast_attempts`` failures, then
  ``slow``.
* :class:`BucketRateLimiter` — the arithmetic of ``golang.org/x/time/rate``'s
  ``Limiter.Reserve().Delay()``: one bucket shared by all items, starting full with ``burst``
  tokens and refilled at ``qps`` per second; every call takes a token (the balance may go
  negative) and the delay is the time until the balance is back to zero. It keeps no per-item
  state, so ``forget`` does nothing and ``num_requeues`` is always 0.
* :class:`MaxOfRateLimiter` — asks *every* limiter (so each records the attempt) and returns the
  longest delay; ``num_requeues`` is the maximum; ``forget`` forgets in all.

:func:`default_controller_rate_limiter` is client-go's ``DefaultControllerRateLimiter``: the max of
a per-item exponential limiter (5 ms .. 1000 s) and a 10 qps / 100 burst bucket.

Delays are floats in seconds. An infinite delay (``math.inf``) means "never" (a bucket whose
burst is smaller than one token, as ``rate.InfDuration``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Protocol

from mpi_controller.runtime.clock import Clock, LoopClock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]


class RateLimiter(Protocol):
    """Decides how long an item waits before it is retried."""

    def when(self, item: Hashable) -> float:
        """Record a failure of ``item`` and return its delay in seconds."""
        ...

    def forget(self, item: Hashable) -> None:
        """Clear the failure history of ``item``."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """Number of failures on record for ``item``."""
        ...


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: ``base_delay * 2**failures``, capped at ``max_delay``."""

    def __init__(self, base_delay: float, max_delay: float) -> None:
        if base_delay < 0 or max_delay < 0:
            raise ValueError("delays must not be negative")
        self._base = base_delay
        self._max = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        try:
            backoff = math.ldexp(self._base, exp)
        except OverflowError:
            return self._max
        return min(backoff, self._max)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """``fast_delay`` for an item's first ``max_fast_attempts`` failures, then ``slow_delay``."""

    def __init__(self, fast_delay: float, slow_delay: float, *, max_fast_attempts: int) -> None:
        self._fast = fast_delay
        self._slow = slow_delay
        self._max_fast = max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        failures = self._failures.get(item, 0) + 1
        self._failures[item] = failures
        return self._fast if failures <= self._max_fast else self._slow

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """A token bucket shared by all items (``golang.org/x/time/rate`` reservation arithmetic).

    The bucket starts full (``burst`` tokens) and refills at ``qps`` tokens per second up to
    ``burst``. Each :meth:`when` reserves one token and returns how long until that reservation
    may act: 0 while tokens remain, else ``deficit / qps``.
    """

    def __init__(self, qps: float, burst: int, *, clock: Clock | None = None) -> None:
        if qps < 0 or burst < 0:
            raise ValueError("qps and burst must not be negative")
        self._qps = qps
        self._burst = burst
        self._clock: Clock = clock if clock is not None else LoopClock()
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: Hashable) -> float:
        if math.isinf(self._qps):
            return 0.0
        if self._burst < 1:
            return math.inf
        now = self._clock.now()
        tokens = self._refilled(now) - 1.0
        self._tokens = tokens
        self._last = now
        if tokens >= 0 or self._qps == 0:
            return 0.0 if tokens >= 0 else math.inf
        return -tokens / self._qps

    def _refilled(self, now: float) -> float:
        if self._last is None:
            return self._tokens
        elapsed = max(now - self._last, 0.0)
        return min(self._tokens + elapsed * self._qps, float(self._burst))

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; every limiter records every failure."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: Hashable) -> float:
        return max([limiter.when(item) for limiter in self._limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(
    qps: float = 10.0, burst: int = 100, *, clock: Clock | None = None
) -> MaxOfRateLimiter:
    """client-go's ``DefaultControllerRateLimiter``: per-item 5 ms .. 1000 s, max with a bucket."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(qps, burst, clock=clock),
    )
