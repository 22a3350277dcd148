"""Work queues: client-go's ``queue_test.go`` / ``delaying_queue_test.go`` behaviours, exactly."""

from __future__ import annotations

import asyncio
import math

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.ratelimit import ItemExponentialFailureRateLimiter
from mpi_controller.runtime.workqueue import DelayingQueue, Queue, RateLimitingQueue


async def settle(rounds: int = 10) -> None:
    """Let every ready task run (no time passes on the manual clock)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def drain_now(q: Queue[str]) -> list[str]:
    """Take (and finish) everything queued right now, in order."""
    items = []
    while len(q):
        item, shutdown = await q.get()
        assert not shutdown
        assert item is not None
        items.append(item)
        q.done(item)
    return items


# -- Queue ----------------------------------------------------------------------------------


async def test_duplicate_adds_coalesce_and_order_is_fifo() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    for item in ["a", "b", "a", "c", "b"]:
        q.add(item)
    assert len(q) == 3
    assert q.len() == 3
    assert await drain_now(q) == ["a", "b", "c"]


async def test_add_while_processing_is_handed_out_again_only_after_done() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("a")
    assert await q.get() == ("a", False)
    q.add("a")
    q.add("a")
    assert len(q) == 0  # dirty, but not queued while processing
    waiter = asyncio.create_task(q.get())
    await settle()
    assert not waiter.done()
    q.done("a")
    assert await waiter == ("a", False)
    q.done("a")
    assert len(q) == 0


async def test_done_without_re_add_does_not_requeue() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("a")
    await q.get()
    q.done("a")
    q.done("a")  # not processing: ignored, never queued twice
    assert len(q) == 0
    q.add("a")
    assert len(q) == 1


async def test_get_waits_for_an_add() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    waiter = asyncio.create_task(q.get())
    await settle()
    assert not waiter.done()
    q.add("x")
    assert await waiter == ("x", False)


async def test_two_workers_never_hold_the_same_item() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    holding: set[str] = set()
    overlaps: list[str] = []
    processed: list[str] = []

    async def worker() -> None:
        while True:
            item, shutdown = await q.get()
            if shutdown or item is None:
                return
            if item in holding:
                overlaps.append(item)
            holding.add(item)
            await settle(3)
            if len(processed) < 40:
                q.add(item)  # re-add while processing
            holding.discard(item)
            processed.append(item)
            q.done(item)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for item in ["a", "b", "a", "a", "b"]:
        q.add(item)
        await asyncio.sleep(0)
    while len(processed) < 40:
        await settle()
    await q.shut_down_with_drain()
    await asyncio.gather(*workers)
    assert overlaps == []
    assert set(processed) == {"a", "b"}
    assert len(processed) >= 40


async def test_cancelled_getter_passes_its_wake_up_on() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await settle()
    q.add("x")  # wakes `first` ...
    first.cancel()  # ... which is cancelled before it runs
    assert await second == ("x", False)
    assert first.cancelled()


async def test_shutdown_hands_out_queued_items_then_reports_shutdown() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("a")
    q.add("b")
    q.shut_down()
    assert q.shutting_down()
    assert await q.get() == ("a", False)
    assert await q.get() == ("b", False)
    assert await q.get() == (None, True)
    assert await q.get() == (None, True)


async def test_adds_after_shutdown_are_ignored() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.shut_down()
    q.add("a")
    assert len(q) == 0
    assert await q.get() == (None, True)


async def test_shutdown_wakes_every_waiting_getter() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    waiters = [asyncio.create_task(q.get()) for _ in range(3)]
    await settle()
    q.shut_down()
    assert await asyncio.gather(*waiters) == [(None, True)] * 3


async def test_item_dirty_during_shutdown_is_still_handed_out_after_done() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("a")
    await q.get()
    q.add("a")
    q.shut_down()
    q.done("a")
    assert await q.get() == ("a", False)
    q.done("a")
    assert await q.get() == (None, True)


async def test_shutdown_with_drain_waits_for_done() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("a")
    q.add("b")
    await q.get()
    await q.get()
    drain = asyncio.create_task(q.shut_down_with_drain())
    await settle()
    assert not drain.done()
    q.done("a")
    await settle()
    assert not drain.done()
    q.done("b")
    await settle()
    assert drain.done()
    await drain


async def test_shutdown_with_drain_returns_at_once_when_nothing_is_processing() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("queued")  # queued items do not hold up the drain (client-go)
    await asyncio.wait_for(q.shut_down_with_drain(), timeout=1)
    assert await q.get() == ("queued", False)


async def test_shut_down_aborts_a_drain() -> None:
    q: Queue[str] = Queue(clock=ManualClock())
    q.add("a")
    await q.get()
    drain = asyncio.create_task(q.shut_down_with_drain())
    await settle()
    assert not drain.done()
    q.shut_down()
    await settle()
    assert drain.done()


# -- DelayingQueue ----------------------------------------------------------------------------


async def test_add_after_fires_in_deadline_order() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 3)
    q.add_after("b", 1)
    q.add_after("c", 2)
    assert len(q) == 0
    clock.advance(0.999)
    assert len(q) == 0
    clock.advance(0.001)
    assert await drain_now(q) == ["b"]
    clock.advance(5)
    assert await drain_now(q) == ["c", "a"]


async def test_add_after_earlier_deadline_wins_later_is_ignored() -> None:
    """client-go: delaying_queue.go keeps the earlier deadline (``heap.Fix`` only if earlier)."""
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 5)
    q.add_after("a", 2)  # moves earlier
    q.add_after("a", 4)  # later than the pending 2 s: ignored
    clock.advance(1.999)
    assert len(q) == 0
    clock.advance(0.001)
    assert await drain_now(q) == ["a"]
    clock.advance(10)
    assert len(q) == 0
    assert clock.pending() == 0


async def test_cancel_delayed_drops_the_wait_not_a_queued_item() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 2)
    q.add_after("b", 2)
    assert q.cancel_delayed("a") is True
    assert q.cancel_delayed("a") is False  # nothing left to drop
    assert clock.pending() == 1  # the timer of "a" is cancelled, that of "b" runs
    clock.advance(2)
    assert await drain_now(q) == ["b"]
    q.add("c")
    assert q.cancel_delayed("c") is False  # queued, not waiting: it stays
    assert await drain_now(q) == ["c"]
    q.add_after("a", 1)  # a new wait after the cancel counts again
    clock.advance(1)
    assert await drain_now(q) == ["a"]


async def test_add_after_zero_or_negative_is_immediate() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert await drain_now(q) == ["a", "b"]
    assert clock.pending() == 0


async def test_waiting_item_coalesces_with_a_direct_add() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1)
    q.add("a")
    assert len(q) == 1
    clock.advance(1)  # already dirty: the timer's add is a duplicate
    assert await drain_now(q) == ["a"]


async def test_shutdown_drops_waiting_items() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1)
    q.add_after("b", 2)
    q.shut_down()
    assert clock.pending() == 0
    clock.advance(5)
    assert len(q) == 0
    q.add_after("c", 0)
    assert await q.get() == (None, True)


async def test_infinite_delay_never_fires() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", math.inf)
    assert clock.pending() == 0
    q.add_after("a", 1)  # earlier than never
    clock.advance(1)
    assert await drain_now(q) == ["a"]


async def test_get_wakes_when_a_delayed_item_is_ready() -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    waiter = asyncio.create_task(q.get())
    q.add_after("a", 0.25)
    await settle()
    assert not waiter.done()
    clock.advance(0.25)
    assert await waiter == ("a", False)


# -- RateLimitingQueue ---------------------------------------------------------------------------


async def test_add_rate_limited_uses_default_controller_limiter_delays() -> None:
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    q.add_rate_limited("k")  # 5 ms
    clock.advance(0.0049)
    assert len(q) == 0
    clock.advance(0.0001)
    assert await drain_now(q) == ["k"]
    q.add_rate_limited("k")  # 10 ms
    clock.advance(0.0099)
    assert len(q) == 0
    clock.advance(0.0001)
    assert await drain_now(q) == ["k"]
    assert q.num_requeues("k") == 2


async def test_forget_resets_backoff() -> None:
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1.0, 60.0), clock=clock
    )
    for _ in range(3):
        q.add_rate_limited("k")  # 1 s, 2 s, 4 s (the earliest deadline, 1 s, is kept)
    assert q.num_requeues("k") == 3
    q.forget("k")
    assert q.num_requeues("k") == 0
    clock.advance(1)
    assert await drain_now(q) == ["k"]
    q.add_rate_limited("k")
    clock.advance(0.999)
    assert len(q) == 0
    clock.advance(0.001)
    assert len(q) == 1
