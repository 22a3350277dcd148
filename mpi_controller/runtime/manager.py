"""The manager: runs every-replica runnables, and leader-only informers and controllers behind an
optional leader elector, with health, readiness and metrics over HTTP; shuts them down in order.

Two groups, as controller-runtime has them:

* **every replica** (:class:`Runnable`: HTTP servers for health and metrics, webhook servers,
  event recorders, certificate upkeep): started first, on standby replicas too, and stopped
  last. A runnable reports ``ready()``; it runs until cancelled.
* **leader only**: informers (caches) and controllers (workers). Without an elector they start
  at once; with one, when it reports leadership.

:meth:`Manager.run` (until ``stop`` is set):

1. starts the health server (``/metrics``, ``/healthz``, ``/readyz``, when ``port`` is given)
   and every runnable;
2. when leading (or at once without an elector): starts every informer's ``run()``, waits
   until all report ``has_synced()`` (woken by each informer with ``add_synced_listener`` as
   it syncs, and polling on the clock every ``sync_poll`` s, default 100 ms, for the others),
   then starts every controller's ``run()``;
3. on ``stop``: **drain queues** (each controller's ``shutdown(drain=True)``, then its workers
   finish what is queued; whatever is still running after ``graceful_shutdown_timeout``
   seconds, default 30, is cancelled) → **stop leading** (the elector's task is cancelled,
   releasing the lease; released only after the drain, so a successor never writes while
   our last syncs still do) → **stop informers** → **flush** (every runnable with a ``flush()``
   coroutine, the event recorders, writes what it still holds, within what is left of
   ``graceful_shutdown_timeout``: a job's last Events are not lost to a rolling update) →
   **stop the runnables** (in reverse order of registration) → **close the client** (the
   optional ``close`` callback) → stop the health server.

Losing leadership (the elector's ``run`` ending, or failing, before ``stop``) cancels controllers
and informers at once, then runnables, closes the client and raises :class:`LeadershipLost`, so
the process can exit non-zero and restart as a candidate. An informer, controller or runnable
that fails ends ``run`` with its exception (in an ``ExceptionGroup``) after the same cleanup.

``/readyz`` passes once every runnable is ready and, while this replica leads, every informer
has synced: a standby replica is ready (its webhooks serve) while it waits for the lease.
``/healthz`` fails (check ``leader-election``) when the elector reports ``healthy() is False``.
More checks can be added with :meth:`Manager.add_healthz_check` and
:meth:`Manager.add_readyz_check`.

:func:`install_signal_handlers` makes SIGTERM/SIGINT set ``stop`` (a second signal exits the
process with status 1 at once, as controller-runtime does).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import structlog

from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.metrics import REGISTRY, Check, HTTPServer, serve_http

__all__ = [
    "Campaigner",
    "ControllerLike",
    "Flushable",
    "HttpEndpoint",
    "InformerLike",
    "LeadershipLost",
    "Manager",
    "Runnable",
    "install_signal_handlers",
]

_log = structlog.get_logger(__name__)


class InformerLike(Protocol):
    """Something that fills a cache: ``run()`` runs until cancelled."""

    async def run(self) -> None: ...

    def has_synced(self) -> bool: ...


@runtime_checkable
class Flushable(Protocol):
    """A runnable holding writes it can finish on shutdown (an event recorder)."""

    async def flush(self) -> None: ...


class Runnable(Protocol):
    """Something every replica runs: ``run()`` until cancelled; ``ready()`` once it serves."""

    async def run(self) -> None: ...

    def ready(self) -> bool: ...


class HttpEndpoint:
    """A :class:`Runnable` serving ``/metrics`` (and the given health checks) on ``port``."""

    def __init__(self, host: str, port: int, *, healthz: Mapping[str, Check] | None = None,
                 readyz: Mapping[str, Check] | None = None) -> None:
        self.host = host
        self.port = port
        self._healthz = healthz
        self._readyz = readyz
        self.server: HTTPServer | None = None

    async def run(self) -> None:
        self.server = await serve_http(self.host, self.port, registry=REGISTRY,
                                       healthz=self._healthz, readyz=self._readyz)
        try:
            await asyncio.Event().wait()
        finally:
            server, self.server = self.server, None
            await asyncio.shield(server.close())

    def ready(self) -> bool:
        return self.server is not None

    @property
    def bound_port(self) -> int | None:
        """The port bound while serving (useful with port 0)."""
        return self.server.port if self.server is not None else None


class ControllerLike(Protocol):
    """Something with workers: ``run()`` returns after ``shutdown()``."""

    async def run(self) -> None: ...

    async def shutdown(self, *, drain: bool = True) -> None: ...


class Campaigner(Protocol):
    """What the Manager needs of leader election (``runtime.leaderelection.LeaderElector`` is
    one): ``run`` campaigns, calls ``on_started_leading`` when elected, returns when leadership
    ends.

    Cancelling ``run`` stops leading (and releases the lease, if the elector does that).
    """

    async def run(self, on_started_leading: Callable[[], Awaitable[None]]) -> None: ...

    def is_leader(self) -> bool: ...

    def healthy(self) -> bool: ...


class LeadershipLost(Exception):
    """The leader elector stopped leading (or failed) before the manager was told to stop."""


class Manager:
    """Owns every-replica runnables, leader-only informers and controllers, an optional leader
    elector and the health/metrics server."""

    def __init__(
        self,
        *,
        informers: Iterable[InformerLike] = (),
        controllers: Iterable[ControllerLike] = (),
        runnables: Iterable[Runnable] = (),
        elector: Campaigner | None = None,
        close: Callable[[], Awaitable[None]] | None = None,
        host: str = "0.0.0.0",
        port: int | None = 8080,
        clock: Clock | None = None,
        sync_poll: float = 0.1,
        graceful_shutdown_timeout: float = 30.0,
    ) -> None:
        self._informers = list(informers)
        self._controllers = list(controllers)
        self._runnables = list(runnables)
        self._elector = elector
        self._close = close
        self._host = host
        self._port = port
        self._clock: Clock = clock if clock is not None else LoopClock()
        self._sync_poll = sync_poll
        self._grace = graceful_shutdown_timeout
        self._healthz: dict[str, Check] = {}
        self._readyz: dict[str, Check] = {"runnables": self.runnables_ready,
                                          "informers-synced": self._synced_if_leading}
        if elector is not None:
            self._healthz["leader-election"] = elector.healthy
        self._server: HTTPServer | None = None
        self._started = False

    # -- configuration ---------------------------------------------------------------------

    def add_runnable(self, runnable: Runnable) -> None:
        """Run ``runnable`` on every replica (before :meth:`run`)."""
        self._runnables.append(runnable)

    def add_healthz_check(self, name: str, check: Check) -> None:
        self._healthz[name] = check

    def add_readyz_check(self, name: str, check: Check) -> None:
        self._readyz[name] = check

    # -- state -----------------------------------------------------------------------------

    def has_synced(self) -> bool:
        """True once the informers have been started and every one has synced."""
        return self._started and all(i.has_synced() for i in self._informers)

    def runnables_ready(self) -> bool:
        """True once every every-replica runnable reports ready."""
        return all(r.ready() for r in self._runnables)

    def _synced_if_leading(self) -> bool:
        leading = self._elector is None or self._elector.is_leader() or self._started
        return not leading or self.has_synced()

    @property
    def http_port(self) -> int | None:
        """The port the HTTP server is bound to, while it runs."""
        return self._server.port if self._server is not None else None

    # -- running ---------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Run until ``stop`` is set (then shut down in order) or leadership is lost."""
        try:
            if self._port is not None:
                self._server = await serve_http(
                    self._host, self._port, registry=REGISTRY,
                    healthz=self._healthz, readyz=self._readyz,
                )
            lost = await self._run_tasks(stop)
        finally:
            await self._shutdown_server()  # also when the port cannot be bound
        if lost is not None:
            raise lost

    async def _shutdown_server(self) -> None:
        try:
            if self._close is not None:
                await self._close()
        finally:
            if self._server is not None:
                await self._server.close()
                self._server = None

    async def _run_tasks(self, stop: asyncio.Event) -> LeadershipLost | None:
        session = _Session(self, stop)
        async with asyncio.TaskGroup() as group:
            session.group = group
            return await session.run()


class _Session:
    """One :meth:`Manager.run`: the tasks it started and the order it stops them in."""

    def __init__(self, manager: Manager, stop: asyncio.Event) -> None:
        self.m = manager
        self.stop = stop
        self.group: asyncio.TaskGroup | None = None
        self.wake = asyncio.Event()
        self.leading = asyncio.Event()
        self.released = asyncio.Event()
        self.elector: asyncio.Task[None] | None = None
        self.runnables: list[asyncio.Task[None]] = []
        self.informers: list[asyncio.Task[None]] = []
        self.controllers: list[asyncio.Task[None]] = []
        self.relay: asyncio.Task[None] | None = None

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        assert self.group is not None
        task = self.group.create_task(coro, name=name)
        task.add_done_callback(lambda _: self.wake.set())
        return task

    async def run(self) -> LeadershipLost | None:
        self.relay = self._spawn(self._relay_stop(), "manager-stop")
        self.runnables = [self._spawn(r.run(), f"runnable-{i}")
                          for i, r in enumerate(self.m._runnables)]
        try:
            if self.m._elector is not None:
                self.elector = asyncio.create_task(
                    self.m._elector.run(self._on_started_leading), name="leader-elector"
                )
                self.elector.add_done_callback(lambda _: self.wake.set())
                await self._until(lambda: self.leading.is_set() or self._ending())
            if not self._ending():
                await self._start_work()
                await self._until(self._ending)
            lost = self._leadership_lost()
            await (self._abort() if lost is not None else self._graceful())
            return lost
        finally:
            await self._cancel_all()

    # -- events ----------------------------------------------------------------------------

    async def _relay_stop(self) -> None:
        await self.stop.wait()
        self.wake.set()

    async def _on_started_leading(self) -> None:
        _log.info("started leading")
        self.leading.set()
        self.wake.set()
        await self.released.wait()

    def _ending(self) -> bool:
        if self.stop.is_set() or any(t.done() for t in self.runnables):
            return True
        return self.elector is not None and self.elector.done()

    def _leadership_lost(self) -> LeadershipLost | None:
        if self.stop.is_set() or self.elector is None or not self.elector.done():
            return None
        if self.elector.cancelled():
            return LeadershipLost("leader election was cancelled")
        exc = self.elector.exception()
        lost = LeadershipLost(f"leader election failed: {exc!r}" if exc else "leadership lost")
        lost.__cause__ = exc
        return lost

    async def _until(self, condition: Callable[[], bool]) -> None:
        while not condition():
            self.wake.clear()
            if condition():
                return
            await self.wake.wait()

    # -- start -----------------------------------------------------------------------------

    async def _start_work(self) -> None:
        m = self.m
        _log.info("starting informers", count=len(m._informers))
        for informer in m._informers:
            listen = getattr(informer, "add_synced_listener", None)
            if callable(listen):
                listen(self.wake.set)
        self.informers = [
            self._spawn(inf.run(), f"informer-{i}") for i, inf in enumerate(m._informers)
        ]
        m._started = True
        while not m.has_synced():
            if self._ending() or any(t.done() for t in self.informers):
                return
            self.wake.clear()
            if not m.has_synced():
                await self._wake_or_sleep(m._sync_poll)
        _log.info("caches synced; starting controllers", count=len(m._controllers))
        self.controllers = [
            self._spawn(c.run(), f"controller-{i}") for i, c in enumerate(m._controllers)
        ]

    async def _wake_or_sleep(self, seconds: float) -> None:
        """Until :attr:`wake` is set (an informer that tells synced, a task that ended) or
        ``seconds`` pass (the poll, for informers that do not tell)."""
        waiter = asyncio.ensure_future(self.wake.wait())
        sleeper = asyncio.ensure_future(self.m._clock.sleep(seconds))
        try:
            await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            sleeper.cancel()

    # -- stop ------------------------------------------------------------------------------

    async def _graceful(self) -> None:
        _log.info("stopping: draining queues, then releasing leadership")
        deadline = asyncio.get_running_loop().time() + self.m._grace
        await self._drain()
        await self._stop_leading()
        await _cancel(self.informers)
        await self._flush(deadline)
        await _cancel(self.runnables[::-1])
        _log.info("stopped")

    async def _flush(self, deadline: float) -> None:
        """Let every runnable with a ``flush()`` finish its writes, until ``deadline``."""
        flushes = [asyncio.ensure_future(r.flush()) for r, t in zip(
            self.m._runnables, self.runnables, strict=True)
            if isinstance(r, Flushable) and not t.done()]
        if not flushes:
            return
        left = max(0.0, deadline - asyncio.get_running_loop().time())
        _, late = await asyncio.wait(flushes, timeout=left)
        if late:
            _log.warning("graceful shutdown timed out while flushing", late=len(late))
            await _cancel(list(late))

    async def _drain(self) -> None:
        """Drain every queue and let workers finish, within the graceful-shutdown timeout."""
        drains = [asyncio.ensure_future(c.shutdown(drain=True)) for c in self.m._controllers]
        waiting = [*drains, *self.controllers]
        if not waiting:
            return
        _, late = await asyncio.wait(waiting, timeout=self.m._grace)
        if late:
            _log.warning("graceful shutdown timed out; cancelling reconciles", late=len(late))
            for controller in self.m._controllers:
                await controller.shutdown(drain=False)
            await _cancel(list(late))

    async def _abort(self) -> None:
        _log.error("leadership lost: stopping controllers and informers")
        for controller in self.m._controllers:
            await controller.shutdown(drain=False)
        await _cancel(self.controllers)
        await _cancel(self.informers)
        await _cancel(self.runnables[::-1])

    async def _stop_leading(self) -> None:
        self.released.set()
        if self.elector is not None:
            await _cancel([self.elector])

    async def _cancel_all(self) -> None:
        self.released.set()
        extra = [t for t in (self.elector, self.relay) if t is not None]
        await _cancel([*extra, *self.controllers, *self.informers, *self.runnables[::-1]])
        self.m._started = False


async def _cancel(tasks: Sequence[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait until they have finished (their outcome is not re-raised)."""
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending)


def install_signal_handlers(
    stop: asyncio.Event, *, signals: Sequence[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
) -> Callable[[], None]:
    """Make ``signals`` set ``stop``; a second signal exits with status 1. Returns an undo."""
    loop = asyncio.get_running_loop()

    def on_signal(sig: signal.Signals) -> None:
        if stop.is_set():
            _log.error("second signal: exiting now", signal=sig.name)
            os._exit(1)
        _log.info("signal received: shutting down", signal=sig.name)
        stop.set()

    for sig in signals:
        loop.add_signal_handler(sig, on_signal, sig)

    def remove() -> None:
        for sig in signals:
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(sig)

    return remove
