"""Shared informers: one reflector-fed cache per (resource, namespace, selector), many handlers.

Contract:

* :class:`SharedIndexInformer` runs one :class:`~mpi_controller.runtime.reflector.Reflector`
  into its :attr:`~SharedIndexInformer.indexer` and fans every change out to the registered
  handlers, in order, after the indexer has applied it (RealFIFO-like, no coalescing).
* Handlers are plain synchronous callables that must not block (typically: resolve the owner
  and ``queue.add(key)``). ``on_delete`` may receive a
  :class:`~mpi_controller.runtime.cache.DeletedFinalStateUnknown` tombstone. An exception in a
  handler is logged and does not stop the informer or the other handlers.
* A handler added after objects are cached first gets ``on_add`` for each of them.
* :meth:`~SharedIndexInformer.has_synced` is True once the first list has been applied to the
  indexer and dispatched to the handlers registered at that time.
* With ``resync_period``, every cached object is re-delivered as ``on_update(obj, obj)`` (same
  object, same resourceVersion) each period; handlers that only react to real changes compare
  resourceVersions.
* Objects pass through ``transform`` before caching
  (:func:`~mpi_controller.runtime.compact.compact_object` by default in
  :class:`InformerFactory`: ``managedFields`` dropped, keys and strings interned). Cached
  objects are shared and **read-only**: copy before mutating.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    Lister,
    namespace_index,
)
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.codec import Codec
from mpi_controller.runtime.compact import compact_object
from mpi_controller.runtime.kubeclient import KubeClient
from mpi_controller.runtime.reflector import (
    ListerWatcher,
    Reflector,
    ResourceListerWatcher,
    Transform,
)

__all__ = [
    "EventHandler",
    "InformerFactory",
    "SharedIndexInformer",
    "drop_managed_fields",
]

log = structlog.get_logger(__name__)

_SYNC_POLL = 0.1  # client-go's syncedPollPeriod


def drop_managed_fields(obj: Obj) -> Obj:
    """Transform: remove ``metadata.managedFields`` (often half an object's size) in place."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


@dataclass(frozen=True, slots=True, eq=False)
class EventHandler:
    """One registration; any callback may be ``None``."""

    on_add: Callable[[Obj], object] | None = None
    on_update: Callable[[Obj, Obj], object] | None = None
    on_delete: Callable[[Obj | DeletedFinalStateUnknown], object] | None = None


class SharedIndexInformer:
    """A cache of one kind of object, kept current by a reflector, with event handlers."""

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = None,
        resync_period: float | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        resource: Resource | None = None,
        **reflector_options: Any,
    ) -> None:
        self._clock: Clock = clock or LoopClock()
        self._handlers: list[EventHandler] = []
        self.resource = resource or getattr(lister_watcher, "resource", None)
        self.resync_period = resync_period
        self._indexer = Indexer(indexers)
        self.reflector = Reflector(
            lister_watcher, self._indexer, self, transform=transform, clock=self._clock,
            rng=rng, **reflector_options,
        )
        self._log = log.bind(informer=self.reflector.name)

    @property
    def indexer(self) -> Indexer:
        return self._indexer

    def lister(self) -> Lister:
        return Lister(self._indexer, self.resource)

    def has_synced(self) -> bool:
        return self.reflector.synced

    def add_synced_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` each time the cache has been filled from a list (the first time:
        :meth:`has_synced` turns True), so a waiter need not poll."""
        self.reflector.synced_listeners.append(listener)

    @property
    def last_sync_resource_version(self) -> str:
        return self.reflector.last_sync_resource_version

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self._indexer.add_indexers(indexers)

    def add_event_handler(
        self,
        on_add: Callable[[Obj], object] | None = None,
        on_update: Callable[[Obj, Obj], object] | None = None,
        on_delete: Callable[[Obj | DeletedFinalStateUnknown], object] | None = None,
    ) -> EventHandler:
        """Register callbacks; objects already cached are replayed to ``on_add`` at once."""
        handler = EventHandler(on_add, on_update, on_delete)
        self._handlers.append(handler)
        if on_add is not None:
            for obj in self._indexer.list():
                self._call(on_add, obj)
        return handler

    async def run(self) -> None:
        """Run the reflector (and the resync timer) until cancelled."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.reflector.run())
            if self.resync_period:
                tasks.create_task(self._resync_loop(self.resync_period))

    async def _resync_loop(self, period: float) -> None:
        while True:
            await self._clock.sleep(period)
            if self.has_synced():
                self.resync()

    def resync(self) -> None:
        """Deliver every cached object to ``on_update(obj, obj)``."""
        for obj in self._indexer.list():
            self.on_update(obj, obj)

    # -- EventSink (called by the reflector after the indexer changed) --------------------

    def on_add(self, obj: Obj) -> None:
        for handler in self._handlers:
            if handler.on_add is not None:
                self._call(handler.on_add, obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        for handler in self._handlers:
            if handler.on_update is not None:
                self._call(handler.on_update, old, new)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        for handler in self._handlers:
            if handler.on_delete is not None:
                self._call(handler.on_delete, obj)

    def _call(self, fn: Callable[..., object], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # one bad handler must not stop the informer
            self._log.exception("event handler failed", handler=getattr(fn, "__qualname__", fn))


_InformerKey = tuple[Resource, str | None, str | None]


class InformerFactory:
    """Shares one :class:`SharedIndexInformer` per (resource, namespace, label selector).

    Every informer has the ``namespace`` index. :meth:`start` launches the informers not yet
    running (call it again after adding more); :meth:`run` starts them and stays until
    cancelled (informers created meanwhile start at once), then stops them all; :meth:`stop`
    cancels and awaits them. Its informers sync by streaming list (``watch_list=True``, as
    client-go's reflector does where the server supports it; LIST otherwise) unless
    ``watch_list=False`` is passed.
    """

    def __init__(
        self,
        client: KubeClient,
        *,
        clock: Clock | None = None,
        default_transform: Transform | None = compact_object,
        resync_period: float | None = None,
        **informer_options: Any,
    ) -> None:
        self.client = client
        self._clock: Clock = clock or LoopClock()
        self.default_transform = default_transform
        self.resync_period = resync_period
        informer_options.setdefault("watch_list", True)
        self._options = informer_options
        self._informers: dict[_InformerKey, SharedIndexInformer] = {}
        self._tasks: dict[_InformerKey, asyncio.Task[None]] = {}
        self._failure: asyncio.Future[None] | None = None

    def informer_for(
        self,
        resource: Resource,
        namespace: str | None = None,
        label_selector: str | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = None,
        codec: Codec | None = None,
    ) -> SharedIndexInformer:
        """The shared informer for this triple; extra ``indexers`` are added if missing.

        ``transform`` replaces the factory's default transform, and ``codec`` decodes list
        and watch bodies (a typed one keeps only what the cache needs); both take effect only
        for the call that creates the informer (later callers share what that one chose)."""
        key = (resource, namespace or None, label_selector or None)
        informer = self._informers.get(key)
        if informer is None:
            lw = ResourceListerWatcher(
                self.client, resource, namespace=namespace, label_selector=label_selector,
                codec=codec,
            )
            informer = SharedIndexInformer(
                lw, indexers={NAMESPACE_INDEX: namespace_index},
                transform=transform or self.default_transform,
                resync_period=self.resync_period, clock=self._clock, resource=resource,
                **self._options,
            )
            self._informers[key] = informer
            if self._failure is not None:  # running: start it at once
                self._start_pending()
        missing = {n: f for n, f in (indexers or {}).items() if not informer.indexer.has_index(n)}
        if missing:
            informer.add_indexers(missing)
        return informer

    @property
    def informers(self) -> list[SharedIndexInformer]:
        return list(self._informers.values())

    async def start(self) -> None:
        """Launch every informer that is not running yet (returns at once)."""
        self._start_pending()

    def _start_pending(self) -> None:
        for key, informer in self._informers.items():
            if key not in self._tasks:
                name = f"informer {informer.reflector.name}"
                task = asyncio.create_task(informer.run(), name=name)
                task.add_done_callback(self._task_done)
                self._tasks[key] = task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or self._failure is None or self._failure.done():
            return
        exc = task.exception()
        self._failure.set_exception(exc or RuntimeError(f"{task.get_name()} stopped"))

    async def run(self) -> None:
        """Start the informers (and any added later) and keep them running until cancelled.

        Raises if an informer crashes; stops every informer on the way out.
        """
        self._failure = asyncio.get_running_loop().create_future()
        try:
            self._start_pending()
            await self._failure
        finally:
            self._failure = None
            await self.stop()

    async def stop(self) -> None:
        """Cancel every running informer and wait for it to finish."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def wait_for_cache_sync(self, timeout: float | None = None) -> bool:
        """Poll (every 100 ms) until every informer has synced; False on timeout."""
        deadline = None if timeout is None else self._clock.now() + timeout
        while not self.has_synced():
            if deadline is not None and self._clock.now() >= deadline:
                return False
            await self._clock.sleep(_SYNC_POLL)
        return True
