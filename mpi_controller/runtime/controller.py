"""A controller: N async workers draining a rate-limited work queue into a ``sync(key)`` function.

Worker loop (client-go's canonical loop with controller-runtime's result handling)::

    key, shutdown = await queue.get()        # shutdown -> the worker ends
    try:    result = await sync(key)
    finally: queue.done(key)                 # always, even on cancellation

* ``sync`` raises          -> ``add_rate_limited(key)`` (per-key backoff), error logged and counted
* ``Result(requeue_after>0)`` -> ``forget(key)`` then ``add_after(key, requeue_after)``
* otherwise (None, ``Result()``) -> ``forget(key)`` (the key's backoff history is cleared)

A key is never synced by two workers at once (the queue's guarantee), and a key enqueued during
its own sync is synced again after it. ``CancelledError`` is never swallowed: a cancelled sync
still releases its key and the cancellation propagates.

Each sync runs with ``controller``, ``key`` and ``reconcile_id`` bound in structlog's context
variables, so every log line emitted by ``sync`` carries them.

Metrics (label ``controller``): ``controller_runtime_reconcile_total{result=success|error|
requeue_after}``, ``controller_runtime_reconcile_errors_total``,
``controller_runtime_reconcile_time_seconds`` (measured on the controller's clock),
``controller_runtime_active_workers`` and ``controller_runtime_max_concurrent_reconciles``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from mpi_controller.runtime import metrics
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.workqueue import RateLimitingQueue

__all__ = ["Controller", "ExpectedError", "Result", "SyncFunc"]


class ExpectedError(Exception):
    """A sync failure that is part of normal operation (logged without a traceback, then
    retried with backoff like any error)."""


@dataclass(frozen=True)
class Result:
    """What a successful sync asks for: ``requeue_after`` seconds > 0 syncs the key again."""

    requeue_after: float | None = None


SyncFunc = Callable[[str], Awaitable[Result | None]]
"""``sync(key)``: reconcile one key; raise to retry with backoff."""

_log = structlog.get_logger(__name__)


class Controller:
    """Runs ``sync`` for keys from a :class:`RateLimitingQueue` with a pool of workers.

    The default queue is a :class:`RateLimitingQueue` named after the controller (so it reports
    ``workqueue_*`` metrics) with the default controller rate limiter on ``clock``.
    """

    def __init__(
        self,
        name: str,
        sync: SyncFunc,
        *,
        queue: RateLimitingQueue[str] | None = None,
        workers: int = 1,
        clock: Clock | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("a controller needs at least one worker")
        self.name = name
        self._sync = sync
        self._clock: Clock = clock if clock is not None else LoopClock()
        self.queue: RateLimitingQueue[str] = (
            queue if queue is not None else RateLimitingQueue(name=name, clock=self._clock)
        )
        self.workers = workers
        self._ids = itertools.count(1)
        self._log = _log.bind(controller=name)
        self._total = {
            result: metrics.RECONCILE_TOTAL.labels(controller=name, result=result)
            for result in ("success", "error", "requeue_after")
        }
        self._errors = metrics.RECONCILE_ERRORS.labels(controller=name)
        self._time = metrics.RECONCILE_TIME.labels(controller=name)
        self._active = metrics.ACTIVE_WORKERS.labels(controller=name)
        self._stopping = False

    # -- producers -------------------------------------------------------------------------

    def enqueue(self, key: str) -> None:
        """Schedule a sync of ``key`` (coalesced with any pending one)."""
        self.queue.add(key)

    def enqueue_after(self, key: str, seconds: float) -> None:
        """Schedule a sync of ``key`` in ``seconds`` (an earlier pending deadline wins)."""
        self.queue.add_after(key, seconds)

    def cancel_delayed(self, key: str) -> bool:
        """Drop ``key``'s sync scheduled for later (an :meth:`enqueue_after`, a requeue or a
        retry not yet due); whether one was. A sync already queued stays."""
        return self.queue.cancel_delayed(key)

    def backlog(self) -> int:
        """Keys that would wait for a worker if one more were enqueued now: those queued
        plus those being synced, less the workers (0 while a worker is free)."""
        return max(len(self.queue) + self.queue.in_flight() - self.workers + 1, 0)

    # -- lifecycle -------------------------------------------------------------------------

    async def run(self, workers: int | None = None) -> None:
        """Run ``workers`` (default: the constructor's) workers until the queue shuts down."""
        count = workers if workers is not None else self.workers
        metrics.MAX_CONCURRENT_RECONCILES.labels(controller=self.name).set(count)
        self._log.info("starting workers", workers=count)
        async with asyncio.TaskGroup() as group:
            for index in range(count):
                group.create_task(self._worker(), name=f"{self.name}-worker-{index}")
        self._log.info("workers stopped")

    async def shutdown(self, *, drain: bool = True) -> None:
        """Shut the queue down; with ``drain``, wait until in-flight syncs are done.

        Keys still queued are not synced: they are dropped, and whoever leads next lists
        everything afresh (syncs are level-triggered), so a handover waits only for the syncs
        already running, not for a whole backlog."""
        self._stopping = True
        if drain:
            await self.queue.shut_down_with_drain()
        else:
            self.queue.shut_down()

    # -- workers ---------------------------------------------------------------------------

    async def _worker(self) -> None:
        while True:
            key, shutdown = await self.queue.get()
            if shutdown or key is None:
                return
            if self._stopping:
                self.queue.done(key)
                continue
            try:
                await self._process(key)
            finally:
                self.queue.done(key)

    async def _process(self, key: str) -> None:
        self._active.inc()
        started = self._clock.now()
        reconcile_id = f"{self.name}-{next(self._ids)}"
        try:
            with structlog.contextvars.bound_contextvars(
                controller=self.name, key=key, reconcile_id=reconcile_id
            ):
                await self._sync_once(key)
        finally:
            self._time.observe(max(self._clock.now() - started, 0.0))
            self._active.dec()

    async def _sync_once(self, key: str) -> None:
        try:
            result = await self._sync(key)
        except Exception as exc:
            self._on_error(key, exc)
            return
        self.queue.forget(key)
        if result is not None and result.requeue_after is not None and result.requeue_after > 0:
            self.queue.add_after(key, result.requeue_after)
            self._total["requeue_after"].inc()
        else:
            self._total["success"].inc()

    def _on_error(self, key: str, exc: Exception) -> None:
        self.queue.add_rate_limited(key)
        self._errors.inc()
        self._total["error"].inc()
        requeues = self.queue.num_requeues(key)
        if isinstance(exc, ExpectedError | ApiError):
            # A known condition (a conflict with another object, an API answer): its message
            # says it all, and a traceback per retry would bury the log.
            self._log.error("reconcile failed", key=key, requeues=requeues, error=str(exc),
                            error_type=type(exc).__name__)
        else:
            self._log.error("reconcile failed", key=key, requeues=requeues, exc_info=exc)
