"""Manager: leader gate, cache-sync gate, health endpoints, shutdown order.

Informers and the elector are fakes of their *protocols* that record what happens to them;
controllers are real :class:`Controller` objects.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable

import aiohttp
import pytest

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.controller import Controller
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.manager import LeadershipLost, Manager, install_signal_handlers


async def eventually(condition: Callable[[], bool], *, within: float = 5.0) -> None:
    """Poll ``condition`` (on the real loop clock) until it holds; fail after ``within`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition did not hold in time")
        await asyncio.sleep(0.005)


class FakeInformer:
    def __init__(self, events: list[str], *, fail: Exception | None = None) -> None:
        self.events = events
        self.synced = False
        self.fail = fail

    async def run(self) -> None:
        self.events.append("informer started")
        try:
            if self.fail is not None:
                raise self.fail
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.events.append("informer stopped")
            raise

    def has_synced(self) -> bool:
        return self.synced


class FakeRunnable:
    """An every-replica runnable (a webhook server, say) that records start and stop."""

    def __init__(self, events: list[str], *, fail: Exception | None = None) -> None:
        self.events = events
        self.is_ready = False
        self.fail = fail

    async def run(self) -> None:
        self.events.append("runnable started")
        try:
            if self.fail is not None:
                raise self.fail
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.events.append("runnable stopped")
            raise

    def ready(self) -> bool:
        return self.is_ready


class FakeElector:
    """Runs the leader callback beside its (imaginary) renew loop, as a real elector does."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.grant = asyncio.Event()
        self.lose = asyncio.Event()
        self.leader = False
        self.ok = True

    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None:
        self.events.append("elector campaigning")
        try:
            await self.grant.wait()
            self.leader = True
            async with asyncio.TaskGroup() as group:
                callback = group.create_task(_call(on_started_leading))
                await self.lose.wait()
                callback.cancel()
            self.events.append("elector lost")
        except asyncio.CancelledError:
            self.events.append("elector stopped")
            raise
        finally:
            self.leader = False

    def is_leader(self) -> bool:
        return self.leader

    def healthy(self) -> bool:
        return self.ok


async def _call(fn: Callable[[], Awaitable[None]]) -> None:
    await fn()


class Recorder:
    """A controller sync that records its calls and blocks until ``release`` is set."""

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, key: str) -> None:
        self.events.append(f"sync started {key}")
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.events.append(f"sync cancelled {key}")
            raise
        self.events.append(f"sync finished {key}")


class Harness:
    def __init__(self, name: str, *, elector: bool = False) -> None:
        self.events: list[str] = []
        self.clock = ManualClock()
        self.informer = FakeInformer(self.events)
        self.runnable = FakeRunnable(self.events)
        self.runnable.is_ready = True
        self.sync = Recorder(self.events)
        self.controller = Controller(name, self.sync, clock=self.clock)
        self.elector = FakeElector(self.events) if elector else None
        self.manager = Manager(
            informers=[self.informer],
            controllers=[self.controller],
            runnables=[self.runnable],
            elector=self.elector,
            close=self.close,
            host="127.0.0.1",
            port=0,
            clock=self.clock,
        )
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def close(self) -> None:
        self.events.append("client closed")

    async def start(self) -> None:
        self.task = asyncio.create_task(self.manager.run(self.stop))
        await eventually(lambda: self.manager.http_port is not None)

    async def get(self, path: str) -> tuple[int, str]:
        url = f"http://127.0.0.1:{self.manager.http_port}{path}"
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            return resp.status, await resp.text()

    async def synced(self) -> None:
        """Mark the cache synced and let the manager's 100 ms poll see it."""
        self.informer.synced = True
        self.clock.advance(0.1)
        await eventually(lambda: self.manager.has_synced())

    async def finish(self) -> None:
        assert self.task is not None
        self.stop.set()
        await asyncio.wait_for(self.task, timeout=5)


async def test_without_elector_controllers_start_only_after_caches_sync() -> None:
    h = Harness("mgr-plain")
    h.controller.enqueue("ns/a")
    await h.start()
    await eventually(lambda: h.events == ["runnable started", "informer started"])
    assert await h.get("/readyz") == (500, "failed: informers-synced\n")
    assert await h.get("/healthz") == (200, "ok")
    h.clock.advance(0.1)  # a poll that still finds the cache unsynced
    await asyncio.sleep(0.02)
    assert h.events == ["runnable started", "informer started"]
    await h.synced()
    await eventually(lambda: "sync finished ns/a" in h.events)
    assert await h.get("/readyz") == (200, "ok")
    status, body = await h.get("/metrics")
    assert status == 200
    assert 'controller_runtime_reconcile_total{controller="mgr-plain",result="success"} 1.0' in body
    await h.finish()
    assert h.events == [
        "runnable started",
        "informer started",
        "sync started ns/a",
        "sync finished ns/a",
        "informer stopped",
        "runnable stopped",
        "client closed",
    ]
    assert h.manager.http_port is None


class TellingInformer(FakeInformer):
    """An informer that tells its listeners when it syncs, as ``SharedIndexInformer`` does."""

    def __init__(self, events: list[str]) -> None:
        super().__init__(events)
        self.listeners: list[Callable[[], None]] = []

    def add_synced_listener(self, listener: Callable[[], None]) -> None:
        self.listeners.append(listener)

    def sync(self) -> None:
        self.synced = True
        for listener in self.listeners:
            listener()


async def test_an_informer_that_tells_it_synced_starts_the_controllers_without_a_poll() -> None:
    h = Harness("mgr-told")
    telling = TellingInformer(h.events)
    h.manager._informers = [telling]
    h.controller.enqueue("ns/a")
    await h.start()
    await eventually(lambda: h.events == ["runnable started", "informer started"])
    telling.sync()  # the manual clock never advances: no poll can see it
    await eventually(lambda: "sync finished ns/a" in h.events)
    assert h.clock.now() == 0.0  # started with no time passing on the clock
    await h.finish()


async def test_shutdown_order_drain_stop_leading_stop_informers_close_client() -> None:
    """The lease is released only after the queues drained, so a successor never writes
    while this replica's last syncs still do (controller-runtime also releases last)."""
    h = Harness("mgr-order", elector=True)
    assert h.elector is not None
    await h.start()
    h.elector.grant.set()
    await eventually(lambda: "informer started" in h.events)
    await h.synced()
    h.sync.release.clear()
    h.controller.enqueue("ns/a")
    await eventually(lambda: "sync started ns/a" in h.events)
    h.stop.set()
    await asyncio.sleep(0.02)
    assert "elector stopped" not in h.events  # still leading while the queue drains
    assert "informer stopped" not in h.events
    h.sync.release.set()
    assert h.task is not None
    await asyncio.wait_for(h.task, timeout=5)
    assert h.events == [
        "runnable started",
        "elector campaigning",
        "informer started",
        "sync started ns/a",
        "sync finished ns/a",
        "elector stopped",
        "informer stopped",
        "runnable stopped",
        "client closed",
    ]


async def test_graceful_shutdown_timeout_cancels_stuck_reconciles() -> None:
    events: list[str] = []
    sync = Recorder(events)
    sync.release.clear()  # never released
    clock = ManualClock()
    controller = Controller("mgr-grace", sync, clock=clock)

    async def close() -> None:
        events.append("client closed")

    manager = Manager(
        controllers=[controller], close=close, port=None, clock=clock,
        graceful_shutdown_timeout=0.05,
    )
    stop = asyncio.Event()
    task = asyncio.create_task(manager.run(stop))
    controller.enqueue("ns/stuck")
    await eventually(lambda: events == ["sync started ns/stuck"])
    stop.set()
    await asyncio.wait_for(task, timeout=5)
    assert events == ["sync started ns/stuck", "sync cancelled ns/stuck", "client closed"]


async def test_standby_runs_only_every_replica_runnables_and_is_ready_when_they_are() -> None:
    h = Harness("mgr-standby", elector=True)
    assert h.elector is not None
    h.runnable.is_ready = False
    h.controller.enqueue("ns/a")
    await h.start()
    await eventually(lambda: h.events == ["runnable started", "elector campaigning"])
    assert await h.get("/readyz") == (500, "failed: runnables\n")
    h.runnable.is_ready = True
    assert await h.get("/readyz") == (200, "ok")  # a standby serves its webhooks
    assert await h.get("/healthz") == (200, "ok")
    assert not h.elector.is_leader()
    await h.finish()
    assert h.events == ["runnable started", "elector campaigning", "elector stopped",
                        "runnable stopped", "client closed"]


async def test_a_new_leader_is_not_ready_until_its_caches_sync() -> None:
    h = Harness("mgr-new-leader", elector=True)
    assert h.elector is not None
    await h.start()
    h.elector.grant.set()
    await eventually(lambda: "informer started" in h.events)
    assert await h.get("/readyz") == (500, "failed: informers-synced\n")
    await h.synced()
    assert await h.get("/readyz") == (200, "ok")
    await h.finish()


async def test_runnable_failure_ends_run_after_cleanup() -> None:
    events: list[str] = []
    broken = FakeRunnable(events, fail=RuntimeError("webhook port taken"))
    informer = FakeInformer(events)

    async def close() -> None:
        events.append("client closed")

    manager = Manager(informers=[informer], runnables=[broken], close=close, port=None,
                      clock=ManualClock())
    with pytest.raises(ExceptionGroup) as caught:
        await asyncio.wait_for(manager.run(asyncio.Event()), timeout=5)
    assert [str(e) for e in caught.value.exceptions] == ["webhook port taken"]
    assert events[0] == "runnable started"
    assert events[-1] == "client closed"
    assert "informer started" not in events or "informer stopped" in events


async def test_healthz_fails_when_the_elector_is_unhealthy() -> None:
    h = Harness("mgr-health", elector=True)
    assert h.elector is not None
    await h.start()
    h.elector.ok = False
    assert await h.get("/healthz") == (500, "failed: leader-election\n")
    h.elector.ok = True
    assert await h.get("/healthz") == (200, "ok")
    h.manager.add_healthz_check("extra", lambda: False)
    assert await h.get("/healthz") == (500, "failed: extra\n")
    await h.finish()


async def test_losing_leadership_stops_everything_and_raises() -> None:
    h = Harness("mgr-lost", elector=True)
    assert h.elector is not None
    await h.start()
    h.elector.grant.set()
    await eventually(lambda: "informer started" in h.events)
    await h.synced()
    h.sync.release.clear()
    h.controller.enqueue("ns/a")
    await eventually(lambda: "sync started ns/a" in h.events)
    h.elector.lose.set()
    assert h.task is not None
    with pytest.raises(LeadershipLost, match="leadership lost"):
        await asyncio.wait_for(h.task, timeout=5)
    assert h.events == [
        "runnable started",
        "elector campaigning",
        "informer started",
        "sync started ns/a",
        "elector lost",
        "sync cancelled ns/a",
        "informer stopped",
        "runnable stopped",
        "client closed",
    ]
    assert h.controller.queue.shutting_down()


async def test_elector_failure_is_reported_as_leadership_lost() -> None:
    events: list[str] = []

    class Broken:
        async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None:
            raise ConnectionError("apiserver unreachable")

        def is_leader(self) -> bool:
            return False

        def healthy(self) -> bool:
            return False

    async def close() -> None:
        events.append("client closed")

    manager = Manager(elector=Broken(), close=close, port=None, clock=ManualClock())
    with pytest.raises(LeadershipLost) as caught:
        await asyncio.wait_for(manager.run(asyncio.Event()), timeout=5)
    assert isinstance(caught.value.__cause__, ConnectionError)
    assert events == ["client closed"]


async def test_informer_failure_ends_run_after_cleanup() -> None:
    events: list[str] = []
    broken = FakeInformer(events, fail=RuntimeError("watch broke"))
    healthy = FakeInformer(events)

    async def close() -> None:
        events.append("client closed")

    manager = Manager(informers=[healthy, broken], close=close, port=None, clock=ManualClock())
    with pytest.raises(ExceptionGroup) as caught:
        await asyncio.wait_for(manager.run(asyncio.Event()), timeout=5)
    assert [str(e) for e in caught.value.exceptions] == ["watch broke"]
    assert events == ["informer started", "informer started", "informer stopped", "client closed"]


async def test_stop_while_waiting_for_caches() -> None:
    h = Harness("mgr-early-stop")
    await h.start()
    await eventually(lambda: h.events == ["runnable started", "informer started"])
    h.stop.set()
    h.clock.advance(0.1)  # the sync poll notices the stop
    assert h.task is not None
    await asyncio.wait_for(h.task, timeout=5)
    assert h.events == ["runnable started", "informer started", "informer stopped",
                        "runnable stopped", "client closed"]


async def test_sigterm_sets_stop() -> None:
    stop = asyncio.Event()
    remove = install_signal_handlers(stop)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(stop.wait(), timeout=5)
    finally:
        remove()
    assert stop.is_set()


async def test_a_health_port_in_use_closes_the_client_and_raises_oserror() -> None:
    """``run`` then prints one line (the address in use) and exits 1; the client is closed."""
    import socket

    closed: list[bool] = []

    async def close() -> None:
        closed.append(True)

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        manager = Manager(informers=[], controllers=[], close=close, host="127.0.0.1",
                          port=busy.getsockname()[1])
        with pytest.raises(OSError, match="address already in use"):
            await manager.run(asyncio.Event())
    assert closed == [True]


async def test_shutdown_flushes_the_event_recorders_before_stopping_them() -> None:
    """Events still queued when the drain ends (a job's last ones, written by its last sync)
    are written before the recorder stops: stop → drain → release → flush → stop runnables."""
    from tests.unit.runtime.test_events import JOB, GatedClient

    events: list[str] = []
    client = GatedClient()
    recorder = EventRecorder(client, "c", writers=1)  # type: ignore[arg-type]

    async def last_sync(key: str) -> None:
        recorder.event(JOB, "Normal", "TFJobSucceeded", "done", keep=True)
        recorder.event(JOB, "Normal", "SuccessfulDeletePod", "gone")
        events.append(f"synced {key}")

    controller = Controller("mgr-flush", last_sync)

    async def close() -> None:
        events.append("client closed")

    manager = Manager(controllers=[controller], runnables=[recorder], close=close, port=None)
    stop = asyncio.Event()
    task = asyncio.create_task(manager.run(stop))
    await eventually(lambda: recorder.ready())
    controller.enqueue("ns/pi")
    await eventually(lambda: events == ["synced ns/pi"] and len(client.calls) == 1)
    stop.set()  # the first write is still waiting on the API server
    await asyncio.sleep(0.05)
    assert not task.done()  # the manager waits for the recorder
    client.gate.set()
    await asyncio.wait_for(task, timeout=5)
    assert [body["reason"] for _verb, _ns, body in client.calls] == [
        "TFJobSucceeded", "SuccessfulDeletePod"]
    assert events == ["synced ns/pi", "client closed"]


async def test_a_flush_past_the_grace_period_is_cut_short() -> None:
    from tests.unit.runtime.test_events import JOB, GatedClient

    client = GatedClient()  # never answers
    recorder = EventRecorder(client, "c")  # type: ignore[arg-type]
    manager = Manager(runnables=[recorder], port=None, graceful_shutdown_timeout=0.1)
    stop = asyncio.Event()
    task = asyncio.create_task(manager.run(stop))
    await eventually(lambda: recorder.ready())
    recorder.event(JOB, "Normal", "TFJobSucceeded", "done", keep=True)
    await eventually(lambda: len(client.calls) == 1)
    stop.set()
    await asyncio.wait_for(task, timeout=5)  # ends although the write never finished
