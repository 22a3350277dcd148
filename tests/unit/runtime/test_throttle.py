"""The client-side token bucket: the rate of client-go's, waiting requests served by
priority (``REQUEST_PRIORITY``), equal priorities in arrival order."""

from __future__ import annotations

import asyncio

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.throttle import REQUEST_PRIORITY, URGENT, RequestThrottle


async def settle(rounds: int = 20) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


async def take(bucket: RequestThrottle, clock: ManualClock, name: str, priority: int,
               done: list[tuple[str, float]]) -> None:
    REQUEST_PRIORITY.set(priority)  # this task's own context
    await bucket.acquire()
    done.append((name, clock.now()))


async def test_waiting_requests_go_by_priority_at_the_bucket_rate() -> None:
    clock = ManualClock()
    bucket = RequestThrottle(qps=2.0, burst=2, clock=clock)
    done: list[tuple[str, float]] = []
    order = [("a1", 1), ("b1", 2), ("a2", 1), ("c1", 3), ("b2", 2), ("a3", 1)]
    tasks = []
    for name, priority in order:
        tasks.append(asyncio.create_task(take(bucket, clock, name, priority, done)))
        await settle()
    assert done == [("a1", 0.0), ("b1", 0.0)]  # the burst, first come first served
    for _ in range(4):
        clock.advance(0.5)
        await settle()
    assert done[2:] == [("a2", 0.5), ("a3", 1.0), ("b2", 1.5), ("c1", 2.0)]
    await asyncio.gather(*tasks)


async def test_urgent_requests_go_before_any_jobs_and_a_cancelled_waiter_is_skipped() -> None:
    clock = ManualClock()
    bucket = RequestThrottle(qps=1.0, burst=1, clock=clock)
    done: list[tuple[str, float]] = []
    first = asyncio.create_task(take(bucket, clock, "first", 5, done))
    await settle()
    job = asyncio.create_task(take(bucket, clock, "job", 5, done))
    gone = asyncio.create_task(take(bucket, clock, "gone", 0, done))
    await settle()
    event = asyncio.create_task(take(bucket, clock, "event", URGENT, done))
    await settle()
    gone.cancel()
    await settle()
    clock.advance(1.0)
    await settle()
    clock.advance(1.0)
    await settle()
    assert done == [("first", 0.0), ("event", 1.0), ("job", 2.0)]
    assert clock.pending() == 0  # nobody waits: no timer left
    await asyncio.gather(first, job, event)
