"""An open watch on the in-memory API server: :class:`FakeWatch` (the event stream a client
iterates, and the test's controls of its end).
"""

from __future__ import annotations

import asyncio
import copy
from types import TracebackType
from typing import TYPE_CHECKING

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.clock import TimerHandle
from mpi_controller.runtime.codec import Codec, dumps, loads
from mpi_controller.runtime.errors import ApiError
from mpi_controller.testing.errors import connection_error
from mpi_controller.testing.store import INITIAL_EVENTS_END, Change, Filter

if TYPE_CHECKING:
    from mpi_controller.testing.api import FakeApi

__all__ = ["FakeWatch"]


class _End:
    """Queue marker: the server closed the stream."""


_END = _End()


class FakeWatch:
    """An open watch on a :class:`FakeApi` (see the module doc); the test drives its end."""

    def __init__(self, api: FakeApi, resource: Resource, params: Obj, codec: Codec | None) -> None:
        self._api = api
        self.resource = resource
        self.params = params
        self._codec = codec
        self._queue: asyncio.Queue[Obj | _End | ApiError] = asyncio.Queue()
        self._filter: Filter | None = None
        self._timers: list[TimerHandle] = []
        self._deadline: float | None = None
        self.opened = False
        self.closed = False

    # -- test controls --------------------------------------------------------------------

    def end(self) -> None:
        """End the stream normally after the events already sent."""
        self._queue.put_nowait(_END)

    def fail(self, error: ApiError | None = None) -> None:
        """Break the stream: the iteration raises ``error`` (default: a lost connection)."""
        self._queue.put_nowait(error or connection_error())

    def send_error(self, error: ApiError) -> None:
        """Send an ``ERROR`` event carrying ``error``'s Status, then end the stream."""
        status = error.body or {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                "status": "Failure", "message": error.message,
                                "reason": error.reason, "code": error.status}
        self._queue.put_nowait({"type": "ERROR", "object": status})
        self.end()

    # -- server side ----------------------------------------------------------------------

    def _start(self, filter_: Filter) -> None:
        self._filter = filter_
        self.opened = True

    def _arm(self, timeout: int | None, bookmarks: bool) -> None:
        """Schedule the end at ``timeout`` and, with ``bookmarks``, the server's heartbeat."""
        clock = self._api.clock
        if timeout:
            self._deadline = clock.now() + timeout
            self._timers.append(clock.call_at(self._deadline, self.end))
        if bookmarks and self._api.bookmark_interval:
            self._schedule_heartbeat()

    def _schedule_heartbeat(self) -> None:
        """The next periodic BOOKMARK: ``bookmark_interval`` from now, or 2 s before the
        deadline if that comes first (``cacheWatcher.nextBookmarkTime``)."""
        clock, interval = self._api.clock, self._api.bookmark_interval
        assert interval
        when = clock.now() + interval
        if self._deadline is not None and self._deadline - 2.0 > clock.now():
            when = min(when, self._deadline - 2.0)
        self._timers.append(clock.call_at(when, self._heartbeat))

    def _heartbeat(self) -> None:
        if not self.closed:
            self._bookmark(self._api._rv)
            self._schedule_heartbeat()

    def _send(self, kind: str, obj: Obj) -> None:
        self._queue.put_nowait({"type": kind, "object": obj})

    def _offer(self, change: Change) -> None:
        """Send what this watcher sees of ``change`` (nothing, ADDED, MODIFIED or DELETED)."""
        assert self._filter is not None
        new_passes = change.new is not None and self._filter.matches(change.key, change.new)
        old_passes = change.old is not None and self._filter.matches(change.key, change.old)
        if new_passes and change.new is not None:
            self._send("MODIFIED" if old_passes else "ADDED", change.new)
        elif old_passes and change.old is not None:
            gone = copy.copy(change.old)
            gone["metadata"] = {**change.old["metadata"], "resourceVersion": str(change.rv)}
            self._send("DELETED", gone)

    def _bookmark(self, rv: int, initial_end: bool = False) -> None:
        meta: Obj = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        self._send("BOOKMARK", {"kind": self.resource.kind,
                                "apiVersion": self.resource.api_version, "metadata": meta})

    def _stop(self) -> None:
        if not self.closed:
            self.closed = True
            for timer in self._timers:
                timer.cancel()
            self._api._forget(self)

    # -- client side ----------------------------------------------------------------------

    def __aiter__(self) -> FakeWatch:
        return self

    async def open(self) -> None:
        """Send the watch request now (the first read does it otherwise); raises what the
        server answers instead of a stream."""
        if self.opened or self.closed:
            return
        try:
            await self._api._open(self)
        except BaseException:
            self._stop()
            raise

    async def __anext__(self) -> Obj:
        if self.closed:
            raise StopAsyncIteration
        await self.open()
        item = await self._queue.get()
        if self.closed or isinstance(item, _End):
            self._stop()
            raise StopAsyncIteration
        if isinstance(item, ApiError):
            self._stop()
            raise item
        data = dumps(item)
        event: Obj = self._codec.decode_event(data) if self._codec else loads(data)
        return event

    async def aclose(self) -> None:
        """Stop the watch (idempotent); a pending or later read ends the iteration."""
        self._stop()
        self._queue.put_nowait(_END)

    async def __aenter__(self) -> FakeWatch:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
