"""Kubernetes Events (``core/v1``) for the objects a controller manages.

Contract:

* :meth:`EventRecorder.event` is a plain, non-blocking call: it stamps the time and puts the
  event on a bounded queue of pending events (``queue_size`` distinct events,
  default 10,000: a pending event costs ~340 bytes, its body is built when it is written;
  client-go's queue of 1,000 dropped events in a burst of 100 TFJobs).
  :meth:`EventRecorder.run` owns the writes (``writers`` at once, 4 by default, never two
  of the same event: one writer behind a busy API server wrote ~7 Events a second) and runs
  until cancelled;
  :meth:`EventRecorder.flush` waits until everything queued so far has been written or given
  up on.
* **Coalescing before the queue**: an event identical to one still pending (same object,
  component, type, reason and message) takes no queue space: it raises the pending event's
  ``count`` and moves its ``lastTimestamp`` (``coalesced`` counts them). So retries that
  repeat the same warning never crowd other events out.
* **Kept events**: when the queue is full, a new event is dropped and logged (``dropped``
  counts them), as client-go does, unless the call says ``keep=True`` (a job's terminal
  events: Succeeded, Failed): those are always queued, past ``queue_size`` (they are few: one
  or two per job).
* The event carries ``involvedObject`` (kind, apiVersion, name, namespace, uid,
  resourceVersion), ``source.component`` (the recorder's, or the one the call names; and
  ``host``), ``reportingComponent`` (the same component),
  ``firstTimestamp``/``lastTimestamp`` and ``count``. It lives in the object's namespace
  (``default`` for cluster-scoped objects). Messages longer than 1024 bytes are cut at a
  UTF-8 character boundary and end in ``...``. ``type`` must be ``Normal`` or ``Warning``.
* **Aggregation**: an event identical to one already written (same object, component, type,
  reason and message; remembered for the last ``cache_size`` distinct events) is recorded by a
  JSON merge patch of the existing Event's ``count`` (raised by the pending event's count)
  and ``lastTimestamp`` instead of a new Event. If that Event has gone (404), a new one is
  created.
* **Priority**: an event is written with the
  :data:`~mpi_controller.runtime.throttle.REQUEST_PRIORITY` of the task that recorded it (a
  job's sync: that job's), so the client's token bucket orders it with its job's other
  requests rather than before every job's.
* Retriable API errors are retried (``max_attempts``, 1 s apart, growing); other errors are
  logged and the event dropped (at debug level when the namespace is being deleted: the
  object it is about goes with it). Nothing here raises into the caller.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import EVENTS
from mpi_controller.kube.text import truncate_message
from mpi_controller.kube.timefmt import format_time, utcnow
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.kubeclient import KubeClient
from mpi_controller.runtime.throttle import REQUEST_PRIORITY, URGENT

__all__ = ["NORMAL", "WARNING", "EventRecorder"]

log = structlog.get_logger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

_Key = tuple[str, ...]


@dataclass(slots=True)
class _Pending:
    """An event waiting to be written: its key (object, component, type, reason, message),
    the object's resourceVersion, its first and last time and count. The body is built when
    it is written, so a pending event costs a few hundred bytes."""

    key: _Key
    resource_version: str
    first: str
    last: str
    count: int = 1
    keep: bool = False
    priority: int = URGENT


@dataclass(slots=True)
class _Written:
    name: str
    namespace: str
    count: int


class EventRecorder:
    """Records Events for one component (e.g. ``mpi-job-controller``)."""

    def __init__(
        self,
        client: KubeClient,
        component: str,
        *,
        clock: Clock | None = None,
        host: str = "",
        queue_size: int = 10_000,
        cache_size: int = 4096,
        max_attempts: int = 3,
        writers: int = 4,
        wall: Callable[[], datetime] = utcnow,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.cache_size = cache_size
        self.max_attempts = max_attempts
        self._clock: Clock = clock or LoopClock()
        self._wall = wall
        self.queue_size = queue_size
        self._pending: OrderedDict[_Key, _Pending] = OrderedDict()
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._written: OrderedDict[_Key, _Written] = OrderedDict()
        self._last_suffix = 0
        self.dropped = 0
        self.coalesced = 0
        self.writers = writers
        self._in_flight: set[_Key] = set()

    # -- producer side ------------------------------------------------------------------

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str, *,
              component: str = "", keep: bool = False) -> None:
        """Queue an event about ``obj`` (never blocks, never raises for API reasons), from
        ``component`` (default: the recorder's); ``keep``: queued even when the queue is
        full."""
        if type not in (NORMAL, WARNING):
            log.error("unsupported event type; dropped", type=type, reason=reason)
            return
        message = truncate_message(message)
        meta = obj.get("metadata") or {}
        key = (str(obj.get("kind", "")), str(obj.get("apiVersion", "")),
               str(meta.get("namespace") or ""), str(meta.get("name", "")),
               str(meta.get("uid") or ""), component or self.component, type, reason, message)
        stamp = format_time(self._wall())
        pending = self._pending.get(key)
        if pending is not None:
            pending.count += 1
            pending.last = stamp
            pending.keep = pending.keep or keep
            self.coalesced += 1
            return
        if len(self._pending) >= self.queue_size and not keep:
            self.dropped += 1
            log.warning("event queue full; event dropped", reason=reason, object=key[3])
            return
        version = str(meta.get("resourceVersion") or "")
        self._pending[key] = _Pending(key, version, stamp, stamp, keep=keep,
                                      priority=REQUEST_PRIORITY.get())
        self._idle.clear()
        self._wake.set()

    def _body(self, pending: _Pending) -> Obj:
        kind, api_version, namespace, name, uid, component, type, reason, message = pending.key
        involved: Obj = {"kind": kind, "apiVersion": api_version, "name": name}
        for field, value in (("namespace", namespace), ("uid", uid),
                             ("resourceVersion", pending.resource_version)):
            if value:
                involved[field] = value
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": self._event_name(name), "namespace": namespace or "default"},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type,
            "source": {"component": component, **({"host": self.host} if self.host else {})},
            "reportingComponent": component,
            "reportingInstance": self.host,
            "firstTimestamp": pending.first,
            "lastTimestamp": pending.last,
            "count": pending.count,
        }

    # -- writer side ----------------------------------------------------------------------

    async def run(self) -> None:
        """Write queued events with ``writers`` concurrent writers until cancelled."""
        async with asyncio.TaskGroup() as group:
            for _ in range(self.writers):
                group.create_task(self._writer())

    async def _writer(self) -> None:
        while True:
            pending = self._next()
            if pending is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            self._in_flight.add(pending.key)
            REQUEST_PRIORITY.set(pending.priority)  # this writer task's own context
            try:
                await self._deliver(pending)
            finally:
                self._in_flight.discard(pending.key)
                if self._pending:
                    self._wake.set()  # one may have waited for this key
                elif not self._in_flight:
                    self._idle.set()

    def _next(self) -> _Pending | None:
        """The oldest pending event whose key no writer holds (two writes of one key would
        create two Events instead of counting)."""
        for key in self._pending:
            if key not in self._in_flight:
                return self._pending.pop(key)
        return None

    def ready(self) -> bool:
        """Always ready: events queue up until :meth:`run` writes them."""
        return True

    async def flush(self) -> None:
        """Wait until every event queued so far has been handled (needs :meth:`run`)."""
        await self._idle.wait()

    async def _deliver(self, pending: _Pending) -> None:
        for attempt in range(1, self.max_attempts + 1):
            try:
                await self._write(pending)
                return
            except ApiError as exc:
                if exc.is_namespace_terminating():  # its object goes with the namespace
                    log.debug("namespace being deleted; event dropped", reason=pending.key[7])
                    return
                if not exc.is_retriable() or attempt == self.max_attempts:
                    log.warning("could not write event; dropped", error=str(exc),
                                reason=pending.key[7])
                    return
            except Exception:  # a malformed event must not stop the recorder
                log.exception("event write crashed; dropped", reason=pending.key[7])
                return
            await self._clock.sleep(float(attempt))

    async def _write(self, pending: _Pending) -> None:
        seen = self._written.get(pending.key)
        if seen is not None:
            patch = {"count": seen.count + pending.count, "lastTimestamp": pending.last}
            try:
                await self.client.patch(EVENTS, seen.name, patch, namespace=seen.namespace)
                seen.count += pending.count
                self._written.move_to_end(pending.key)
                return
            except ApiError as exc:
                if not exc.is_not_found():
                    raise
                del self._written[pending.key]
        body = self._body(pending)
        namespace = body["metadata"]["namespace"]
        await self.client.create(EVENTS, body, namespace=namespace, result=False)
        name = str(body["metadata"]["name"])  # named by _body; the answer is not read
        self._written[pending.key] = _Written(name, namespace, pending.count)
        while len(self._written) > self.cache_size:
            self._written.popitem(last=False)

    def _event_name(self, name: str) -> str:
        """``<object name>.<hex nanoseconds>`` like client-go, strictly increasing."""
        suffix = max(time.time_ns(), self._last_suffix + 1)
        self._last_suffix = suffix
        return f"{name}.{suffix:x}"
