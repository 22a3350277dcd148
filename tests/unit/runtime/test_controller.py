"""Controller worker loop: client-go's loop with controller-runtime's result handling."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.controller import Controller, Result
from mpi_controller.runtime.metrics import REGISTRY


async def settle(rounds: int = 20) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


def value(metric: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(metric, labels)


class Script:
    """A sync function whose outcome per call is scripted; records every call."""

    def __init__(self, *outcomes: Result | Exception | None) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[str] = []

    async def __call__(self, key: str) -> Result | None:
        self.calls.append(key)
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


async def start(ctrl: Controller) -> asyncio.Task[None]:
    task = asyncio.create_task(ctrl.run())
    await settle()
    return task


async def stop(ctrl: Controller, task: asyncio.Task[None]) -> None:
    await ctrl.shutdown(drain=True)
    await asyncio.wait_for(task, timeout=5)


async def test_error_requeues_with_exact_rate_limited_delays(clock: ManualClock) -> None:
    sync = Script(RuntimeError("1"), RuntimeError("2"), RuntimeError("3"), None)
    ctrl = Controller("c-error", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("ns/a")
    await settle()
    assert sync.calls == ["ns/a"]
    for delay, calls in [(0.005, 2), (0.01, 3), (0.02, 4)]:
        clock.advance(delay - 0.0001)
        await settle()
        assert len(sync.calls) == calls - 1
        clock.advance(0.0001)
        await settle()
        assert len(sync.calls) == calls
    assert ctrl.queue.num_requeues("ns/a") == 0  # the success forgot the history
    assert value("controller_runtime_reconcile_errors_total", controller="c-error") == 3
    assert value("controller_runtime_reconcile_total", controller="c-error", result="error") == 3
    assert value("controller_runtime_reconcile_total", controller="c-error", result="success") == 1
    await stop(ctrl, task)


async def test_requeue_after_forgets_backoff_and_syncs_again_exactly(clock: ManualClock) -> None:
    sync = Script(RuntimeError("x"), Result(requeue_after=30.0), None)
    ctrl = Controller("c-requeue-after", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("k")
    await settle()
    assert ctrl.queue.num_requeues("k") == 1
    clock.advance(0.005)
    await settle()
    assert sync.calls == ["k", "k"]
    assert ctrl.queue.num_requeues("k") == 0
    clock.advance(29.999)
    await settle()
    assert len(sync.calls) == 2
    clock.advance(0.001)
    await settle()
    assert len(sync.calls) == 3
    total = "controller_runtime_reconcile_total"
    assert value(total, controller="c-requeue-after", result="requeue_after") == 1
    assert value(total, controller="c-requeue-after", result="success") == 1
    await stop(ctrl, task)


async def test_zero_requeue_after_is_plain_success(clock: ManualClock) -> None:
    sync = Script(Result(requeue_after=0), Result())
    ctrl = Controller("c-zero", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("k")
    ctrl.enqueue("j")
    await settle()
    clock.advance(3600)
    await settle()
    assert sync.calls == ["k", "j"]
    assert value("controller_runtime_reconcile_total", controller="c-zero", result="success") == 2
    await stop(ctrl, task)


async def test_enqueue_after_schedules_a_sync(clock: ManualClock) -> None:
    sync = Script()
    ctrl = Controller("c-enqueue-after", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue_after("k", 2)
    ctrl.enqueue_after("k", 1)
    clock.advance(0.5)
    await settle()
    assert sync.calls == []
    clock.advance(0.5)
    await settle()
    assert sync.calls == ["k"]
    clock.advance(5)
    await settle()
    assert sync.calls == ["k"]
    await stop(ctrl, task)


async def test_error_is_logged_with_controller_and_key(clock: ManualClock) -> None:
    ctrl = Controller("c-log", Script(ValueError("bad spec")), clock=clock)
    task = await start(ctrl)
    with structlog.testing.capture_logs() as logs:
        ctrl.enqueue("ns/job")
        await settle()
    errors = [entry for entry in logs if entry["log_level"] == "error"]
    assert len(errors) == 1
    assert errors[0]["event"] == "reconcile failed"
    assert errors[0]["controller"] == "c-log"
    assert errors[0]["key"] == "ns/job"
    assert errors[0]["requeues"] == 1
    assert str(errors[0]["exc_info"]) == "bad spec"
    await stop(ctrl, task)


async def test_sync_runs_with_key_bound_in_log_context(clock: ManualClock) -> None:
    seen: list[dict[str, object]] = []

    async def sync(key: str) -> None:
        seen.append(dict(structlog.contextvars.get_contextvars()))

    ctrl = Controller("c-ctx", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("ns/a")
    await settle()
    assert seen == [{"controller": "c-ctx", "key": "ns/a", "reconcile_id": "c-ctx-1"}]
    assert structlog.contextvars.get_contextvars() == {}
    await stop(ctrl, task)


async def test_key_is_never_synced_concurrently_and_readds_are_not_lost(
    clock: ManualClock,
) -> None:
    active: set[str] = set()
    overlaps: list[str] = []
    calls: list[str] = []
    gate = asyncio.Event()

    async def sync(key: str) -> None:
        if key in active:
            overlaps.append(key)
        active.add(key)
        calls.append(key)
        await gate.wait()
        active.discard(key)

    ctrl = Controller("c-serial", sync, workers=4, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("a")
    await settle()
    ctrl.enqueue("a")  # while "a" syncs
    ctrl.enqueue("b")
    await settle()
    assert calls == ["a", "b"]
    assert value("controller_runtime_active_workers", controller="c-serial") == 2
    gate.set()
    await settle()
    assert calls == ["a", "b", "a"]
    assert overlaps == []
    assert value("controller_runtime_active_workers", controller="c-serial") == 0
    assert value("controller_runtime_max_concurrent_reconciles", controller="c-serial") == 4
    await stop(ctrl, task)


async def test_cancelled_sync_releases_its_key_and_propagates(clock: ManualClock) -> None:
    started = asyncio.Event()

    async def sync(key: str) -> None:
        started.set()
        await asyncio.Event().wait()

    ctrl = Controller("c-cancel", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("k")
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    ctrl.enqueue("k")  # would only be marked dirty if "k" were still processing
    assert len(ctrl.queue) == 1
    assert value("controller_runtime_active_workers", controller="c-cancel") == 0


async def test_shutdown_drains_in_flight_syncs_then_workers_exit(clock: ManualClock) -> None:
    release = asyncio.Event()
    finished: list[str] = []

    async def sync(key: str) -> None:
        await release.wait()
        finished.append(key)

    ctrl = Controller("c-drain", sync, workers=2, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("a")
    ctrl.enqueue("b")
    await settle()
    shutdown = asyncio.create_task(ctrl.shutdown(drain=True))
    await settle()
    assert not shutdown.done()
    ctrl.enqueue("c")  # ignored: the queue is shutting down
    release.set()
    await asyncio.wait_for(shutdown, timeout=5)
    await asyncio.wait_for(task, timeout=5)
    assert sorted(finished) == ["a", "b"]


async def test_shutdown_leaves_queued_keys_to_the_successor(clock: ManualClock) -> None:
    """Only in-flight syncs are drained: keys still queued are not synced after shutdown (the
    next leader relists), so releasing the lease waits for no backlog."""
    release = asyncio.Event()
    finished: list[str] = []

    async def sync(key: str) -> None:
        await release.wait()
        finished.append(key)

    ctrl = Controller("c-backlog", sync, workers=1, clock=clock)
    task = await start(ctrl)
    for key in ("a", "b", "c"):
        ctrl.enqueue(key)
    await settle()
    shutdown = asyncio.create_task(ctrl.shutdown(drain=True))
    await settle()
    release.set()
    await asyncio.wait_for(shutdown, timeout=5)
    await asyncio.wait_for(task, timeout=5)
    assert finished == ["a"]


async def test_shutdown_without_drain_returns_at_once(clock: ManualClock) -> None:
    release = asyncio.Event()

    async def sync(key: str) -> None:
        await release.wait()

    ctrl = Controller("c-nodrain", sync, clock=clock)
    task = await start(ctrl)
    ctrl.enqueue("a")
    await settle()
    await asyncio.wait_for(ctrl.shutdown(drain=False), timeout=1)
    assert not task.done()
    release.set()
    await asyncio.wait_for(task, timeout=5)


def test_at_least_one_worker() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        Controller("c-none", Script(), workers=0, clock=ManualClock())


async def test_backlog_counts_the_keys_a_new_one_would_wait_behind(clock: ManualClock) -> None:
    ctrl = Controller("c-backlog", Script(), workers=2, clock=clock)
    assert ctrl.backlog() == 0
    ctrl.enqueue("a")
    assert ctrl.backlog() == 0  # a worker is still free for the next key
    await ctrl.queue.get()
    ctrl.enqueue("b")
    assert ctrl.backlog() == 1  # "a" in flight, "b" queued: both workers taken
    ctrl.enqueue("c")
    assert ctrl.backlog() == 2
    await ctrl.queue.get()
    ctrl.queue.done("a")
    assert ctrl.backlog() == 1  # "b" in flight, "c" queued
    await ctrl.queue.get()
    ctrl.queue.done("b")
    ctrl.queue.done("c")
    assert ctrl.backlog() == 0
