"""Writes of a job's child objects: get-or-create, update and delete, with ownership checks.

:class:`ChildWriter` is the I/O half of the sync for one object kind at a time. Contract:

* ``ensure(resource, existing, desired)`` returns the object to use: ``existing`` when it is
  controlled by the job (updated first when ``needs_update`` says so), else the created
  ``desired``. An object that exists but is not controlled by the job — in the cache, or found
  after a create answered AlreadyExists (the informers are label-narrowed, so a foreign object
  can be missing from the cache) — produces the Warning ``ErrResourceExists`` event (``Resource
  "<name>" of Kind "<kind>" already exists and is not managed by <job kind>``) and raises
  :class:`ResourceNotControlled`, naming the real kind.
* Every create is announced to :class:`~mpi_controller.runtime.expectations.ControllerExpectations`
  before it is sent and lowered again if it fails, so a sync that runs before the informer has
  seen the object does not create it twice. Deletes are handled the same way. Objects whose
  informer has no event handlers (nothing would observe them) are written with
  ``expect=False``.
* Before every create, ``owner_cached()`` must still hold (the owner, with its uid, is in the
  cache): a sync that awaited the API while the owner's deletion arrived stops with
  :class:`OwnerGone` instead of creating children for it.
* A child that was seen deleted while its owner was still cached (see :class:`Vanished`) is
  created again only after a GET of the owner from the API server confirms that it still
  exists with the same uid and is not being deleted. Otherwise :class:`OwnerGone` is raised:
  the cache had not yet seen the owner's deletion (the garbage collector's deletes of its
  children can arrive first), and creating the child again would only feed the collector.
* ``update(resource, obj)`` records the version it wrote in :class:`OwnUpdates`: the informer's
  delivery of that very version (its echo) starts no sync, since the sync that wrote it went on
  with the object the API server answered. Until that delivery, a later sync reads the written
  object instead of the cache's older version (:meth:`OwnUpdates.latest`, through
  :meth:`~mpi_controller.engine.context.SyncContext.cached`): it neither writes the same change
  again nor sends an update based on the replaced version, which would only earn a 409
  Conflict and end that sync before its status write.
* ``read(resource, name)`` is a GET of a child no informer caches (``None`` when it does not
  exist), for a kind whose upstream reads an object it cannot select by label (TrainJob's
  runtime snapshot ConfigMap).
* Errors are returned to the caller (the controller requeues with backoff); nothing here
  retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mpi_controller.engine.gather import first_error, gather_bounded
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.owners import is_controlled_by, resource_exists_message
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.controller import ExpectedError
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.expectations import ControllerExpectations
from mpi_controller.runtime.kubeclient import KubeClient

__all__ = ["ChildWriter", "OwnUpdates", "OwnerGone", "ResourceNotControlled", "Vanished"]

EventSink = Callable[[Event], None]


ERR_RESOURCE_EXISTS = "ErrResourceExists"


class ResourceNotControlled(ExpectedError):
    """An object with the child's name exists and is not controlled by the job."""


class OwnerGone(Exception):
    """The owner read from the API server is gone, replaced or being deleted: the cache is
    behind, and its deletion event will follow."""


class Vanished:
    """Children (kind, name) seen deleted while their owner (``key``) was cached.

    Filled by the informers' delete handlers; an entry is dropped once the child is created
    again, or when the owner itself is forgotten."""

    def __init__(self) -> None:
        self._by_key: dict[str, set[tuple[str, str]]] = {}

    def deleted(self, key: str, kind: str, name: str) -> None:
        self._by_key.setdefault(key, set()).add((kind, name))

    def __contains__(self, entry: tuple[str, str, str]) -> bool:
        key, kind, name = entry
        return (kind, name) in self._by_key.get(key, ())

    def recreated(self, key: str, kind: str, name: str) -> None:
        names = self._by_key.get(key)
        if names is not None:
            names.discard((kind, name))
            if not names:
                del self._by_key[key]

    def forget(self, key: str) -> None:
        self._by_key.pop(key, None)


class OwnUpdates:
    """The versions this engine's updates wrote to children, so that their echoes start no sync.

    Per child (kind, namespace, name): the resourceVersions our updates wrote and the informer
    has not delivered yet, and the updates still in flight. An update the informer delivers
    while one of ours is in flight may be its echo, arriving before the answer: it waits for
    the answer (:meth:`absorbs` holds it) and, unless it was the version the answer names, its
    job is enqueued then (``missed``; a failed update enqueues all it held). Delivering one of
    our versions ends it and those written before it; any other version ends them all. While
    some of a child's versions are not delivered, :meth:`latest` is the last one written."""

    def __init__(self, missed: Callable[[str], object]) -> None:
        self._missed = missed
        self._written: dict[tuple[str, str, str], list[str]] = {}
        self._latest: dict[tuple[str, str, str], Obj] = {}
        self._in_flight: dict[tuple[str, str, str], int] = {}
        self._held: dict[tuple[str, str, str], list[tuple[str, str]]] = {}

    @staticmethod
    def _id(kind: str, obj: Mapping[str, Any]) -> tuple[str, str, str]:
        meta = obj.get("metadata") or {}
        return kind, str(meta.get("namespace", "")), str(meta.get("name", ""))

    def begin(self, child: tuple[str, str, str]) -> None:
        """An update of ``child`` (kind, namespace, name) is about to be sent."""
        self._in_flight[child] = self._in_flight.get(child, 0) + 1

    def end(self, child: tuple[str, str, str], written: Mapping[str, Any] | None) -> None:
        """The update of ``child`` answered ``written`` (``None``: it failed)."""
        rv = (written.get("metadata") or {}).get("resourceVersion") if written else None
        if rv and written is not None:
            self._written.setdefault(child, []).append(str(rv))
            self._latest[child] = dict(written)
        left = self._in_flight.pop(child, 1) - 1
        if left > 0:  # another update of it is in flight: what is held waits for that too
            self._in_flight[child] = left
            return
        for held_rv, key in self._held.pop(child, []):
            if not self._take(child, held_rv):
                self._missed(key)

    def absorbs(self, kind: str, obj: Mapping[str, Any], key: str) -> bool:
        """Whether the delivered ``obj`` (a child of job ``key``) needs no sync of ours: it is
        one of our versions, or it waits for an update in flight (module doc)."""
        if not self._written and not self._in_flight:
            return False
        child = self._id(kind, obj)
        rv = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        if child in self._in_flight:
            self._held.setdefault(child, []).append((rv, key))
            return True
        return self._take(child, rv)

    def _take(self, child: tuple[str, str, str], rv: str) -> bool:
        written = self._written.pop(child, None)
        if written is None or rv not in written:
            self._latest.pop(child, None)
            return False
        rest = written[written.index(rv) + 1:]
        if rest:
            self._written[child] = rest
        else:
            self._latest.pop(child, None)
        return True

    def latest(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The object our last update of the child (kind, namespace, name) wrote, while the
        informer has not delivered it: the cache still holds an older version. ``None``
        otherwise."""
        if not self._latest:
            return None
        return self._latest.get((kind, namespace, name))

    def forget(self, kind: str, obj: Mapping[str, Any]) -> None:
        """``obj`` was deleted: its versions will not be delivered."""
        child = self._id(kind, obj)
        self._written.pop(child, None)
        self._latest.pop(child, None)

    def __len__(self) -> int:
        return len(self._written) + len(self._held)


class ChildWriter:
    """Child-object writes for one sync of one job (``key`` is ``ns/name``; ``owner`` is the
    job's resource)."""

    def __init__(
        self,
        client: KubeClient,
        expectations: ControllerExpectations,
        *,
        job: Mapping[str, Any],
        key: str,
        emit: EventSink,
        owner: Resource,
        owner_cached: Callable[[], bool],
        vanished: Vanished,
        updates: OwnUpdates,
    ) -> None:
        self._client = client
        self._expectations = expectations
        self._job = job
        self._key = key
        self._emit = emit
        self._owner = owner
        self._owner_cached = owner_cached
        self._vanished = vanished
        self._updates = updates
        self._owner_lock = asyncio.Lock()
        self._owner_confirmed = False
        self.namespace: str = job["metadata"]["namespace"]

    def check_controlled(self, obj: Mapping[str, Any], kind: str) -> None:
        """Raise :class:`ResourceNotControlled` (and emit the event) if ``obj`` is not ours."""
        if not is_controlled_by(obj, self._job):
            message = resource_exists_message(obj, kind=kind, owner_kind=self._owner.kind)
            event = Event(WARNING, ERR_RESOURCE_EXISTS, message)
            self._emit(event)
            raise ResourceNotControlled(event.message)

    def in_line(self, existing: Mapping[str, Any] | None, desired: Mapping[str, Any],
                needs_update: Callable[[Mapping[str, Any], Mapping[str, Any]], bool]) -> bool:
        """``existing`` is the job's and needs no update: :meth:`ensure` of it would neither
        write, raise nor record an Event."""
        return existing is not None and is_controlled_by(existing, self._job) \
            and not needs_update(existing, desired)

    async def ensure(
        self,
        resource: Resource,
        existing: Mapping[str, Any] | None,
        desired: Mapping[str, Any],
        *,
        needs_update: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None = None,
        apply_update: Callable[[Mapping[str, Any], Mapping[str, Any]], Obj] | None = None,
        expect: bool = True,
    ) -> Obj:
        """Get-or-create ``desired``; update an existing controlled object when it drifted."""
        if existing is None:
            return await self.create(resource, desired, expect=expect)
        self.check_controlled(existing, resource.kind)
        drifted = needs_update is not None and needs_update(existing, desired)
        if drifted and apply_update is not None:
            return await self.update(resource, apply_update(existing, desired))
        return dict(existing)

    async def create(self, resource: Resource, desired: Mapping[str, Any], *,
                     expect: bool = True, foreign_ok: bool = False, result: bool = True) -> Obj:
        """Create ``desired``; on AlreadyExists adopt it if it is ours, else ErrResourceExists
        (``foreign_ok``: use it whoever owns it, e.g. a ServiceAccount a pod template names;
        ``result=False``: the caller does not read what is returned, which may be ``{}``)."""
        name = desired["metadata"]["name"]
        if not self._owner_cached():
            raise OwnerGone(f"{self._key} left the cache during the sync")
        recreating = (self._key, resource.kind, name) in self._vanished
        if recreating:
            await self.confirm_owner()
        expected = 1 if expect else 0
        self._expectations.raise_expectations(self._key, add=expected)
        try:
            created = await self._client.create(resource, desired, namespace=self.namespace,
                                                result=result)
        except ApiError as err:
            self._expectations.lower_expectations(self._key, add=expected)
            if not err.is_already_exists():
                raise
            created = await self._client.get(resource, name, namespace=self.namespace)
            if not foreign_ok:
                self.check_controlled(created, resource.kind)
        if recreating:
            self._vanished.recreated(self._key, resource.kind, name)
        return created

    async def confirm_owner(self) -> None:
        """Raise :class:`OwnerGone` unless the API server still has the owner, with its uid
        and no deletionTimestamp (one GET per sync once it succeeds; concurrent creates wait
        for it)."""
        async with self._owner_lock:
            if not self._owner_confirmed:
                await self._read_owner()
                self._owner_confirmed = True

    async def _read_owner(self) -> None:
        meta = self._job["metadata"]
        try:
            current = await self._client.get(self._owner, meta["name"], namespace=self.namespace)
        except ApiError as err:
            if err.is_not_found():
                raise OwnerGone(f"{self._key} no longer exists") from err
            raise
        current_meta = current.get("metadata") or {}
        if current_meta.get("uid") != meta.get("uid") or current_meta.get("deletionTimestamp"):
            raise OwnerGone(f"{self._key} was deleted or replaced")

    async def create_many(
        self, resource: Resource, objects: Sequence[Mapping[str, Any]], *, concurrency: int
    ) -> tuple[list[Obj], list[BaseException]]:
        """Create ``objects`` with at most ``concurrency`` requests in flight.

        Returns the created (or adopted) objects in input order, and the errors."""
        results = await gather_bounded(objects, lambda o: self.create(resource, o),
                                       concurrency=concurrency)
        created = [r for r in results if not isinstance(r, BaseException)]
        return created, [r for r in results if isinstance(r, BaseException)]

    async def delete(self, resource: Resource, name: str, *, expect: bool = True,
                     propagation_policy: str | None = None) -> None:
        """Delete ``name``; NotFound counts as done. ``expect=False`` for an object the job
        does not control directly (a pod of a child Job): the engine never observes its
        deletion for the job, so no expectation is raised for it."""
        if expect:
            self._expectations.raise_expectations(self._key, delete=1)
        try:
            await self._client.delete(resource, name, namespace=self.namespace,
                                      propagation_policy=propagation_policy, result=False)
        except ApiError as err:
            if expect:
                self._expectations.lower_expectations(self._key, delete=1)
            if not err.is_not_found():
                raise

    async def delete_many(
        self, resource: Resource, names: Sequence[str], *, concurrency: int,
        expect: bool = True,
    ) -> None:
        """Delete ``names``, at most ``concurrency`` at once; the first error is raised after
        every delete has finished."""
        results = await gather_bounded(names, lambda n: self.delete(resource, n, expect=expect),
                                       concurrency=concurrency)
        error = first_error(results)
        if error is not None:
            raise error

    async def delete_owner(self, resource: Resource, name: str, *, uid: str) -> None:
        """Delete the owner itself (no expectations: it is no child), only if it still has
        ``uid``; NotFound counts as done."""
        try:
            await self._client.delete(resource, name, namespace=self.namespace,
                                      preconditions={"uid": uid} if uid else None)
        except ApiError as err:
            if not err.is_not_found():
                raise

    async def update(self, resource: Resource, obj: Mapping[str, Any]) -> Obj:
        updates = self._updates
        child = (resource.kind, self.namespace, str((obj.get("metadata") or {}).get("name", "")))
        updates.begin(child)
        updated: Obj | None = None
        try:
            updated = await self._client.update(resource, obj, namespace=self.namespace)
        finally:
            updates.end(child, updated)
        return updated

    async def read(self, resource: Resource, name: str) -> Obj | None:
        """The child ``name`` from the API server, or ``None`` when it does not exist."""
        try:
            return await self._client.get(resource, name, namespace=self.namespace)
        except ApiError as err:
            if err.is_not_found():
                return None
            raise

    async def patch_apply(self, resource: Resource, desired: Mapping[str, Any], *,
                          field_manager: str) -> Obj:
        """Server-side apply ``desired`` (an existing child), taking over its fields
        (``force``)."""
        return await self._client.patch(resource, desired["metadata"]["name"], desired,
                                        namespace=self.namespace, patch_type="apply",
                                        field_manager=field_manager, force=True)

    async def update_status(self, resource: Resource, obj: Mapping[str, Any], *,
                            result: bool = True) -> Obj:
        """PUT ``obj``'s status (``result=False``: the answer, unread, may be ``{}``)."""
        return await self._client.update_status(resource, obj, namespace=self.namespace,
                                                result=result)

