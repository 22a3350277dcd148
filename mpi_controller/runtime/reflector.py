"""The reflector: keeps an :class:`~mpi_controller.runtime.cache.Indexer` equal to the server.

It follows client-go's ``tools/cache/reflector.go`` with a RealFIFO-like delivery: each event
is applied to the indexer and then dispatched, synchronously and in order, to an
:class:`EventSink` (the informer's handlers). There is no queue between the two.

Contract:

* **List** in pages of ``page_size`` (500). The first list asks for ``resourceVersion="0"``
  (served from the watch cache); later relists ask for the last synced RV (unpaged, so the
  watch cache can serve them, unless an earlier list was paged). A 410 on a list marks the RV
  unavailable and retries at once with ``""`` (a quorum read). An expired ``continue`` token
  falls back to one full, unpaged list. List items get ``kind``/``apiVersion`` from the list.
* **Replace**: listed objects reach the sink as adds (new key) or updates (known key); keys in
  the indexer but absent from the list are removed and reported as
  :class:`~mpi_controller.runtime.cache.DeletedFinalStateUnknown` tombstones.
* **Watch** from the listed RV with ``allowWatchBookmarks`` and ``timeoutSeconds`` random in
  ``[min_watch_timeout, 2*min_watch_timeout]``; every event or BOOKMARK advances the RV
  (bookmarks do nothing else). A normal close re-opens the watch from the last RV without
  relisting; so does an inactivity deadline (no event nor bookmark for
  ``inactivity_timeout`` seconds). ``ERROR`` events become :class:`ApiError`.
* **Errors**: 410 ⇒ back off, relist. 429 or a transport failure before any event ⇒ back
  off, re-watch (no relist); a transport failure after events ⇒ re-watch at once. A watch
  that ends within 1 s with no event ⇒ back off, relist. Anything else ⇒ back off, relist.
* **Backoff**: 0.8 s doubling to 30 s, each delay plus up to 100 % jitter; it restarts at
  0.8 s once a run has stayed healthy for 2 minutes (``Backoff``).
* **Streaming list** (``watch_list=True``, client-go's WatchList): instead of a LIST, a WATCH
  with ``sendInitialEvents=true``, ``resourceVersionMatch=NotOlderThan`` and the last synced
  RV (``""`` at first and after a 410: the most recent state) delivers the current objects as
  ``ADDED`` events, one at a time (never a whole page in memory), then a ``BOOKMARK``
  annotated ``k8s.io/initial-events-end: "true"`` whose RV is the list's. The collected objects
  are then applied exactly as a listed set (adds, updates, tombstones), and the same stream
  goes on as the watch. A server that rejects the request (400/422: WatchList unsupported or
  disabled) makes the reflector fall back to LIST for good; a stream that ends before the
  bookmark backs off and tries again.
* ``synced`` turns True once the first list has been applied and dispatched.
* The indexer is updated before the sink hears of a change. Objects pass through
  ``transform`` first (e.g. drop ``managedFields``); they are then shared and read-only.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import structlog

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.cache import DeletedFinalStateUnknown, Indexer
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.codec import Codec
from mpi_controller.runtime.deadline import Deadline, DeadlineExceeded
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.kubeclient import KubeClient

__all__ = [
    "INITIAL_EVENTS_END",
    "Backoff",
    "EventSink",
    "ListerWatcher",
    "Reflector",
    "ResourceListerWatcher",
    "Transform",
]

log = structlog.get_logger(__name__)

Transform = Callable[[Obj], Obj]

_VERY_SHORT_WATCH = 1.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class ListerWatcher(Protocol):
    """Where a reflector lists and watches (``list`` pages; ``watch`` yields raw events)."""

    async def list(self, **params: Any) -> Obj: ...

    def watch(self, **params: Any) -> AsyncIterator[Obj]: ...


class ResourceListerWatcher:
    """List and watch one :class:`Resource` (optionally one namespace, filtered by selectors),
    decoding bodies with ``codec`` (a typed :class:`~mpi_controller.runtime.codec.Codec`
    keeps only the fields it declares)."""

    def __init__(
        self,
        client: KubeClient,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        codec: Codec | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.codec = codec

    async def list(self, **params: Any) -> Obj:
        return await self.client.list(
            self.resource, namespace=self.namespace, label_selector=self.label_selector,
            field_selector=self.field_selector, codec=self.codec, **params,
        )

    def watch(self, **params: Any) -> AsyncIterator[Obj]:
        return self.client.watch(
            self.resource, namespace=self.namespace, label_selector=self.label_selector,
            field_selector=self.field_selector, codec=self.codec, **params,
        )

    def __repr__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        sel = f" [{self.label_selector}]" if self.label_selector else ""
        return f"{self.resource.group_resource}{where}{sel}"


class EventSink(Protocol):
    """Receives changes after the indexer has applied them (plain, non-blocking calls)."""

    def on_add(self, obj: Obj) -> None: ...

    def on_update(self, old: Obj, new: Obj) -> None: ...

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None: ...


class Backoff:
    """client-go's reflector backoff: ``initial * factor**n`` capped, plus jitter.

    Each delay is ``d + rng.random() * jitter * d``. It resets to ``initial`` when at least
    ``reset_after`` seconds passed since the previous delay ended (a healthy run).
    """

    def __init__(
        self,
        *,
        clock: Clock,
        rng: random.Random,
        initial: float = 0.8,
        factor: float = 2.0,
        cap: float = 30.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
    ) -> None:
        self._clock, self._rng = clock, rng
        self._initial, self._factor, self._cap = initial, factor, cap
        self._jitter, self._reset_after = jitter, reset_after
        self._next = initial
        self._last_end: float | None = None

    def delay(self) -> float:
        now = self._clock.now()
        if self._last_end is not None and now - self._last_end >= self._reset_after:
            self._next = self._initial
        base = self._next
        self._next = min(base * self._factor, self._cap)
        delay = base + self._rng.random() * self._jitter * base
        self._last_end = now + delay
        return delay


class _Relist(Exception):
    """Internal: leave the watch loop and relist after a backoff."""


class Reflector:
    """List and watch into an indexer, dispatching each change to a sink."""

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        indexer: Indexer,
        sink: EventSink,
        *,
        transform: Transform | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        name: str = "",
        page_size: int = 500,
        min_watch_timeout: float = 300.0,
        inactivity_timeout: float = 120.0,
        watch_list: bool = False,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.indexer = indexer
        self.sink = sink
        self.transform = transform
        self.name = name or repr(lister_watcher)
        self.page_size = page_size
        self.min_watch_timeout = min_watch_timeout
        self.inactivity_timeout = inactivity_timeout
        self.watch_list = watch_list
        self._clock: Clock = clock or LoopClock()
        self._rng = rng or random.Random()
        self.backoff = Backoff(clock=self._clock, rng=self._rng)
        self.last_sync_resource_version = ""
        self._rv_unavailable = False
        self._paginated = False
        self.synced = False
        self.synced_listeners: list[Callable[[], None]] = []
        """Called, in order, each time the cache is filled from a list (``synced`` set)."""
        self._log = log.bind(reflector=self.name)

    def _mark_synced(self) -> None:
        self.synced = True
        for listener in self.synced_listeners:
            listener()

    async def run(self) -> None:
        """List and watch until cancelled; every failure is logged and retried."""
        while True:
            try:
                await self._list_and_watch()
            except Exception as exc:  # logged; this loop is the retry policy
                self._log.warning("list and watch failed", error=repr(exc))
            await self._clock.sleep(self.backoff.delay())

    async def _list_and_watch(self) -> None:
        first = None
        if self.watch_list:
            first = await self._stream_list()
        if first is None:
            await self._list()
        try:
            await self._watch_loop(first)
        except _Relist:
            return

    # -- list -----------------------------------------------------------------------------

    def _relist_resource_version(self) -> str:
        if self._rv_unavailable:
            return ""
        return self.last_sync_resource_version or "0"

    async def _list(self) -> None:
        rv = self._relist_resource_version()
        try:
            items, list_rv = await self._list_pages(rv)
        except ApiError as exc:
            if not exc.is_gone():
                raise
            self._log.info("list resourceVersion expired; quorum relist", resource_version=rv)
            self._rv_unavailable = True
            items, list_rv = await self._list_pages("")
        self._rv_unavailable = False
        self._replace(items)
        self.last_sync_resource_version = list_rv
        self._mark_synced()

    async def _list_pages(self, rv: str) -> tuple[list[Obj], str]:
        paged = self._paginated or rv in ("", "0")
        params: dict[str, Any] = {"resource_version": rv}
        if paged:
            params["limit"] = self.page_size
        items: list[Obj] = []
        while True:
            try:
                page = await self.lister_watcher.list(**params)
            except ApiError as exc:
                if not (exc.is_gone() and "continue_" in params):
                    raise
                self._log.info("continue token expired; full list")
                page = await self.lister_watcher.list(resource_version=rv)
                return self._transformed(_items(page)), _page_rv(page)
            # Transform page by page: the full objects of one page are garbage before the next
            # arrives (9000 listed pods: ~300 MB held at once untransformed, ~35 MB slimmed).
            items.extend(self._transformed(_items(page)))
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items, _page_rv(page)
            self._paginated = True
            params = {"limit": self.page_size, "continue_": token}

    def _transformed(self, items: list[Obj]) -> list[Obj]:
        transform = self.transform
        return [transform(raw) for raw in items] if transform else items

    def _replace(self, items: list[Obj]) -> None:
        """``items`` are listed objects, already transformed."""
        key_func, indexer, sink = self.indexer.key_func, self.indexer, self.sink
        listed: set[str] = set()
        for obj in items:
            key = key_func(obj)
            listed.add(key)
            old = indexer.get_by_key(key)
            indexer.add(obj)
            if old is None:
                sink.on_add(obj)
            else:
                sink.on_update(old, obj)
        for key in [k for k in indexer.list_keys() if k not in listed]:
            gone = indexer.delete_key(key)
            if gone is not None:
                sink.on_delete(DeletedFinalStateUnknown(key, gone))

    # -- streaming list -------------------------------------------------------------------

    async def _stream_list(self) -> AsyncIterator[Obj] | None:
        """Sync from a WatchList stream and return it, open, to be watched on; ``None`` when
        the server does not support streaming lists (from now on LIST is used). A 410 for
        the last synced RV is retried at once from the most recent state (``""``)."""
        while True:
            rv = "" if self._rv_unavailable else self.last_sync_resource_version
            stream = self.lister_watcher.watch(
                resource_version=rv, resource_version_match="NotOlderThan",
                send_initial_events=True, allow_watch_bookmarks=True,
                timeout_seconds=self._watch_timeout(),
            )
            try:
                items, list_rv = await self._initial_events(stream)
            except ApiError as exc:
                await _aclose(stream)
                if exc.is_gone() and rv:
                    self._log.info("streaming list resourceVersion expired; from the latest",
                                   resource_version=rv)
                    self._rv_unavailable = True
                    continue
                if exc.status in (400, 422):
                    self._log.info("streaming list not supported; using LIST", error=str(exc))
                    self.watch_list = False
                    return None
                raise
            except BaseException:
                await _aclose(stream)
                raise
            self._rv_unavailable = False
            self._replace(items)
            self.last_sync_resource_version = list_rv
            self._mark_synced()
            return stream

    async def _initial_events(self, stream: AsyncIterator[Obj]) -> tuple[list[Obj], str]:
        """The objects sent before the initial-events-end bookmark, and its RV."""
        objects: dict[str, Obj] = {}
        key_func, transform = self.indexer.key_func, self.transform
        async with Deadline(self._clock, self.inactivity_timeout) as deadline:
            async for event in stream:
                deadline.touch()
                kind = event.get("type")
                obj = event.get("object") or {}
                if kind == "ERROR":
                    raise ApiError.from_status(obj)
                meta = obj.get("metadata") or {}
                if kind == "BOOKMARK":
                    annotations = meta.get("annotations") or {}
                    if annotations.get(INITIAL_EVENTS_END) == "true":
                        return list(objects.values()), str(meta.get("resourceVersion") or "")
                    continue
                item = transform(obj) if transform else obj
                if kind == "DELETED":
                    objects.pop(key_func(item), None)
                elif kind in ("ADDED", "MODIFIED"):
                    objects[key_func(item)] = item
        raise ApiError(0, "StreamEnded", "the watch ended before the initial-events-end bookmark")

    # -- watch ----------------------------------------------------------------------------

    def _watch_timeout(self) -> int:
        return int(self.min_watch_timeout * (1.0 + self._rng.random()))

    async def _watch_loop(self, stream: AsyncIterator[Obj] | None = None) -> None:
        """Watch from the last synced RV until a relist is needed; ``stream``, if given, is
        already open (a streaming list's) and is consumed first."""
        while True:
            started = self._clock.now()
            if stream is None:
                stream = self.lister_watcher.watch(
                    resource_version=self.last_sync_resource_version,
                    timeout_seconds=self._watch_timeout(),
                    allow_watch_bookmarks=True,
                )
            try:
                count = await self._consume(stream)
            except ApiError as exc:
                await self._on_watch_error(exc)
                continue
            finally:
                await _aclose(stream)
                stream = None
            if count == 0 and self._clock.now() - started < _VERY_SHORT_WATCH:
                self._log.warning("very short watch: closed within 1s with no events")
                raise _Relist

    async def _on_watch_error(self, exc: ApiError) -> None:
        """Decide between re-watching now, re-watching after a backoff, or relisting."""
        if exc.is_gone():
            self._log.info("watch expired; relisting", error=str(exc))
            raise _Relist from exc
        if exc.is_too_many_requests() or exc.status == 0:
            delay = self.backoff.delay()
            self._log.info("watch failed; backing off", error=str(exc), delay=round(delay, 3))
            await self._clock.sleep(delay)
            return
        self._log.warning("watch failed; relisting", error=str(exc))
        raise _Relist from exc

    async def _consume(self, stream: AsyncIterator[Obj]) -> int:
        """Apply events until the stream ends; return how many arrived."""
        count = 0
        try:
            async with Deadline(self._clock, self.inactivity_timeout) as deadline:
                async for event in stream:
                    deadline.touch()
                    count += 1
                    self._handle_event(event)
        except DeadlineExceeded:
            self._log.warning("watch inactive; restarting", seconds=self.inactivity_timeout)
        except ApiError as exc:
            if exc.status == 0 and count:
                self._log.info("watch connection lost; re-watching", error=str(exc))
                return count
            raise
        return count

    def _handle_event(self, event: Obj) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            raise ApiError.from_status(obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if kind == "BOOKMARK":
            if rv:
                self.last_sync_resource_version = rv
            return
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            self._log.warning("unknown watch event type", type=kind)
            return
        self._apply(kind, self.transform(obj) if self.transform else obj)
        if rv:
            self.last_sync_resource_version = rv

    def _apply(self, kind: str, obj: Obj) -> None:
        key = self.indexer.key_func(obj)
        if kind == "DELETED":
            self.indexer.delete_key(key)
            self.sink.on_delete(obj)
            return
        old = self.indexer.get_by_key(key)
        self.indexer.add(obj)
        if old is None:
            self.sink.on_add(obj)
        else:
            self.sink.on_update(old, obj)


def _items(page: Obj) -> list[Obj]:
    items: list[Obj] = page.get("items") or []
    kind = str(page.get("kind", ""))
    if items and kind.endswith("List"):
        item_kind, api_version = kind[: -len("List")], page.get("apiVersion")
        for item in items:
            item.setdefault("kind", item_kind)
            if api_version:
                item.setdefault("apiVersion", api_version)
    return items


def _page_rv(page: Obj) -> str:
    return str((page.get("metadata") or {}).get("resourceVersion") or "")


async def _aclose(stream: AsyncIterator[Obj]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
