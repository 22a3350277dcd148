"""The client-side token bucket every API request passes: :class:`RequestThrottle`."""

from __future__ import annotations

from mpi_controller.runtime.clock import Clock
from mpi_controller.runtime.ratelimit import BucketRateLimiter

__all__ = ["RequestThrottle"]


class RequestThrottle:
    """client-go's client-side flowcontrol: every request takes a token from a
    :class:`~mpi_controller.runtime.ratelimit.BucketRateLimiter` (``burst`` tokens, refilled
    at ``qps`` per second) and sleeps until its reservation is due, so callers are served in
    order at the steady rate. ``qps <= 0`` turns it off."""

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        self._clock = clock
        self._bucket = BucketRateLimiter(qps, max(burst, 1), clock=clock) if qps > 0 else None

    async def acquire(self) -> None:
        if self._bucket is None:
            return
        delay = self._bucket.when(None)
        if delay > 0:
            await self._clock.sleep(delay)
