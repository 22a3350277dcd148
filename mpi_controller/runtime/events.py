"""Kubernetes Events (``core/v1``) for the objects a controller manages.

Contract:

* :meth:`EventRecorder.event` is a plain, non-blocking call: it stamps the time, builds the
  event and puts it on a bounded queue (when full, the event is dropped and logged, as
  client-go does). :meth:`EventRecorder.run` owns the writes and runs until cancelled;
  :meth:`EventRecorder.flush` waits until everything queued so far has been written or given
  up on.
* The event carries ``involvedObject`` (kind, apiVersion, name, namespace, uid,
  resourceVersion), ``source.component`` (the recorder's, or the one the call names; and
  ``host``), ``reportingComponent`` (the same component),
  ``firstTimestamp``/``lastTimestamp`` and ``count``. It lives in the object's namespace
  (``default`` for cluster-scoped objects). Messages longer than 1024 bytes are cut at a
  UTF-8 character boundary and end in ``...``. ``type`` must be ``Normal`` or ``Warning``.
* **Aggregation**: an event identical to one already written (same object, component, type,
  reason and message; remembered for the last ``cache_size`` distinct events) is recorded by a
  JSON merge patch of the existing Event's ``count`` and ``lastTimestamp`` instead of a new
  Event.
  If that Event has gone (404), a new one is created.
* Retriable API errors are retried (``max_attempts``, 1 s apart, growing); other errors are
  logged and the event dropped. Nothing here raises into the caller.
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

__all__ = ["NORMAL", "WARNING", "EventRecorder"]

log = structlog.get_logger(__name__)

NORMAL = "Normal"
WARNING = "Warning"

_Key = tuple[str, ...]


@dataclass(slots=True)
class _Pending:
    key: _Key
    namespace: str
    body: Obj
    timestamp: str


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
        queue_size: int = 1000,
        cache_size: int = 4096,
        max_attempts: int = 3,
        wall: Callable[[], datetime] = utcnow,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.cache_size = cache_size
        self.max_attempts = max_attempts
        self._clock: Clock = clock or LoopClock()
        self._wall = wall
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=queue_size)
        self._written: OrderedDict[_Key, _Written] = OrderedDict()
        self._last_suffix = 0
        self.dropped = 0

    # -- producer side ------------------------------------------------------------------

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str, *,
              component: str = "") -> None:
        """Queue an event about ``obj`` (never blocks, never raises for API reasons), from
        ``component`` (default: the recorder's)."""
        if type not in (NORMAL, WARNING):
            log.error("unsupported event type; dropped", type=type, reason=reason)
            return
        message = truncate_message(message)
        involved = _involved_object(obj)
        namespace = involved.get("namespace") or "default"
        component = component or self.component
        key = (*(str(involved.get(k, "")) for k in _INVOLVED_KEYS), component, type, reason,
               message)
        stamp = format_time(self._wall())
        body = self._body(involved, namespace, component, type, reason, message, stamp)
        try:
            self._queue.put_nowait(_Pending(key, namespace, body, stamp))
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("event queue full; event dropped", reason=reason, object=involved["name"])

    def _body(self, involved: Obj, namespace: str, component: str, type: str, reason: str,
              message: str, stamp: str) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type,
            "source": {"component": component, **({"host": self.host} if self.host else {})},
            "reportingComponent": component,
            "reportingInstance": self.host,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }

    # -- writer side ----------------------------------------------------------------------

    async def run(self) -> None:
        """Write queued events until cancelled."""
        while True:
            pending = await self._queue.get()
            try:
                await self._deliver(pending)
            finally:
                self._queue.task_done()

    def ready(self) -> bool:
        """Always ready: events queue up until :meth:`run` writes them."""
        return True

    async def flush(self) -> None:
        """Wait until every event queued so far has been handled (needs :meth:`run`)."""
        await self._queue.join()

    async def _deliver(self, pending: _Pending) -> None:
        for attempt in range(1, self.max_attempts + 1):
            try:
                await self._write(pending)
                return
            except ApiError as exc:
                if not exc.is_retriable() or attempt == self.max_attempts:
                    log.warning("could not write event; dropped", error=str(exc),
                                reason=pending.body["reason"])
                    return
            except Exception:  # a malformed event must not stop the recorder
                log.exception("event write crashed; dropped", reason=pending.body["reason"])
                return
            await self._clock.sleep(float(attempt))

    async def _write(self, pending: _Pending) -> None:
        seen = self._written.get(pending.key)
        if seen is not None:
            patch = {"count": seen.count + 1, "lastTimestamp": pending.timestamp}
            try:
                await self.client.patch(EVENTS, seen.name, patch, namespace=seen.namespace)
                seen.count += 1
                self._written.move_to_end(pending.key)
                return
            except ApiError as exc:
                if not exc.is_not_found():
                    raise
                del self._written[pending.key]
        body = dict(pending.body)
        body["metadata"] = {"name": self._event_name(body), "namespace": pending.namespace}
        created = await self.client.create(EVENTS, body, namespace=pending.namespace)
        name = str((created or body)["metadata"]["name"])
        self._written[pending.key] = _Written(name, pending.namespace, 1)
        while len(self._written) > self.cache_size:
            self._written.popitem(last=False)

    def _event_name(self, body: Obj) -> str:
        """``<object name>.<hex nanoseconds>`` like client-go, strictly increasing."""
        suffix = max(time.time_ns(), self._last_suffix + 1)
        self._last_suffix = suffix
        return f"{body['involvedObject']['name']}.{suffix:x}"


_INVOLVED_KEYS = ("kind", "apiVersion", "namespace", "name", "uid")


def _involved_object(obj: Mapping[str, Any]) -> Obj:
    meta = obj.get("metadata") or {}
    ref: Obj = {
        "kind": obj.get("kind", ""),
        "apiVersion": obj.get("apiVersion", ""),
        "name": meta.get("name", ""),
    }
    for field, source in (("namespace", "namespace"), ("uid", "uid"),
                          ("resourceVersion", "resourceVersion")):
        if meta.get(source):
            ref[field] = meta[source]
    return ref
