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


async def _hog(bucket: RequestThrottle, clock: ManualClock, done: list[tuple[str, float]],
               until: float) -> None:
    """An older job (priority 1) that always asks again as soon as it was served."""
    n = 0
    while clock.now() < until:
        n += 1
        await take(bucket, clock, f"hog{n}", 1, done)


class Starving:
    """At 1 request a second (burst 1): two older jobs asking again as soon as served, until
    t=8, and at t=0.5 one request of a newer job (priority 2), ``victim``."""

    def __init__(self, **kw: float) -> None:
        self.clock = ManualClock()
        self.bucket = RequestThrottle(qps=1.0, burst=1, clock=self.clock, **kw)
        self.done: list[tuple[str, float]] = []
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self.tasks += [asyncio.create_task(_hog(self.bucket, self.clock, self.done, until=8.0))
                       for _ in range(2)]
        await settle()
        self.clock.advance(0.5)
        self.ask("victim", 2)
        await settle()

    def ask(self, name: str, priority: int) -> None:
        self.tasks.append(asyncio.create_task(
            take(self.bucket, self.clock, name, priority, self.done)))

    async def run(self, seconds: float) -> dict[str, float]:
        """Let ``seconds`` pass in half-second steps; when each request was served."""
        for _ in range(round(seconds / 0.5)):
            self.clock.advance(0.5)
            await settle()
        return dict(self.done)

    async def finish(self) -> None:
        self.clock.advance(10)
        await settle()
        await asyncio.gather(*self.tasks)


async def test_a_request_that_waited_max_wait_goes_before_older_jobs_that_never_stop() -> None:
    # Two older jobs' syncs keep asking for more than the rate (pods restarting forever): by
    # priority alone the newer job's request would wait as long as they run.
    load = Starving()
    await load.start()
    served = await load.run(5.0)
    # Served at the first token after it had waited MAX_WAIT (2 s) and the late waiters
    # ahead of it in line (the hogs' requests of t=0) went.
    assert served["victim"] == 3.0
    assert [t for name, t in load.done if name.startswith("hog")][:4] == [0.0, 1.0, 2.0, 4.0]
    await load.finish()


async def test_without_aging_the_newer_job_waits_as_long_as_the_older_ones_ask() -> None:
    # The same load with aging turned off: what MAX_WAIT is for.
    load = Starving(max_wait=float("inf"))
    await load.start()
    assert "victim" not in await load.run(7.5)
    await load.finish()
    assert dict(load.done)["victim"] >= 8.0


async def test_an_urgent_request_still_goes_before_the_late_ones() -> None:
    # Lists and Lease work (URGENT) are few: they keep their place ahead of aged requests.
    load = Starving()
    await load.start()
    await load.run(2.0)  # to t=2.5: the victim has waited 2 s, behind the hogs' requests
    load.ask("urgent", URGENT)
    await settle()
    served = await load.run(2.0)
    assert served["urgent"] == 3.0
    assert served["victim"] == 4.0
    await load.finish()
