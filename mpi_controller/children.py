"""Writes of an MPIJob's child objects: get-or-create, update and delete, with ownership checks.

:class:`ChildWriter` is the I/O half of the sync for one object kind at a time. Contract:

* ``ensure(resource, existing, desired)`` returns the object to use: ``existing`` when it is
  controlled by the job (updated first when ``needs_update`` says so), else the created
  ``desired``. An object that exists but is not controlled by the job — in the cache, or found
  after a create answered AlreadyExists (the informers are label-narrowed, so a foreign object
  can be missing from the cache) — produces the Warning ``ErrResourceExists`` event and raises
  :class:`ResourceNotControlled`, naming the real kind.
* Every create is announced to :class:`~mpi_controller.runtime.expectations.ControllerExpectations`
  before it is sent and lowered again if it fails, so a sync that runs before the informer has
  seen the object does not create it twice. Deletes are handled the same way.
* Errors are returned to the caller (the controller requeues with backoff); nothing here
  retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mpi_controller.reconcile import Event, is_controlled_by, not_controlled_event
from mpi_controller.runtime.client import ApiError, KubeClient, Resource
from mpi_controller.runtime.controller import ExpectedError
from mpi_controller.runtime.expectations import ControllerExpectations

__all__ = ["ChildWriter", "ResourceNotControlled", "gather_raising"]

Obj = dict[str, Any]
EventSink = Callable[[Event], None]


class ResourceNotControlled(ExpectedError):
    """An object with the child's name exists and is not controlled by the MPIJob."""


class ChildWriter:
    """Child-object writes for one MPIJob sync (``key`` is ``ns/name``)."""

    def __init__(
        self,
        client: KubeClient,
        expectations: ControllerExpectations,
        *,
        job: Mapping[str, Any],
        key: str,
        emit: EventSink,
    ) -> None:
        self._client = client
        self._expectations = expectations
        self._job = job
        self._key = key
        self._emit = emit
        self.namespace: str = job["metadata"]["namespace"]

    def check_controlled(self, obj: Mapping[str, Any], kind: str) -> None:
        """Raise :class:`ResourceNotControlled` (and emit the event) if ``obj`` is not ours."""
        if not is_controlled_by(obj, self._job):
            event = not_controlled_event(obj, kind)
            self._emit(event)
            raise ResourceNotControlled(event.message)

    async def ensure(
        self,
        resource: Resource,
        existing: Mapping[str, Any] | None,
        desired: Mapping[str, Any],
        *,
        needs_update: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] | None = None,
        apply_update: Callable[[Mapping[str, Any], Mapping[str, Any]], Obj] | None = None,
    ) -> Obj:
        """Get-or-create ``desired``; update an existing controlled object when it drifted."""
        if existing is None:
            return await self.create(resource, desired)
        self.check_controlled(existing, resource.kind)
        drifted = needs_update is not None and needs_update(existing, desired)
        if drifted and apply_update is not None:
            return await self._client.update(
                resource, apply_update(existing, desired), namespace=self.namespace)
        return dict(existing)

    async def create(self, resource: Resource, desired: Mapping[str, Any]) -> Obj:
        """Create ``desired``; on AlreadyExists adopt it if it is ours, else ErrResourceExists."""
        self._expectations.raise_expectations(self._key, add=1)
        try:
            return await self._client.create(resource, desired, namespace=self.namespace)
        except ApiError as err:
            self._expectations.lower_expectations(self._key, add=1)
            if not err.is_already_exists():
                raise
        current = await self._client.get(
            resource, desired["metadata"]["name"], namespace=self.namespace)
        self.check_controlled(current, resource.kind)
        return current

    async def create_many(
        self, resource: Resource, objects: Sequence[Mapping[str, Any]], *, concurrency: int
    ) -> tuple[list[Obj], list[BaseException]]:
        """Create ``objects`` with at most ``concurrency`` requests in flight.

        Returns the created (or adopted) objects in input order, and the errors."""
        limit = asyncio.Semaphore(max(concurrency, 1))

        async def one(obj: Mapping[str, Any]) -> Obj:
            async with limit:
                return await self.create(resource, obj)

        results = await asyncio.gather(*(one(o) for o in objects), return_exceptions=True)
        created: list[Obj] = []
        errors: list[BaseException] = []
        for result in results:
            if isinstance(result, BaseException):
                if isinstance(result, asyncio.CancelledError):
                    raise result
                errors.append(result)
            else:
                created.append(result)
        return created, errors

    async def delete(self, resource: Resource, name: str) -> None:
        """Delete ``name``; NotFound counts as done."""
        self._expectations.raise_expectations(self._key, delete=1)
        try:
            await self._client.delete(resource, name, namespace=self.namespace)
        except ApiError as err:
            self._expectations.lower_expectations(self._key, delete=1)
            if not err.is_not_found():
                raise

    async def delete_many(
        self, resource: Resource, names: Sequence[str], *, concurrency: int
    ) -> None:
        limit = asyncio.Semaphore(max(concurrency, 1))

        async def one(name: str) -> None:
            async with limit:
                await self.delete(resource, name)

        await gather_raising(*(one(n) for n in names))

    async def update(self, resource: Resource, obj: Mapping[str, Any]) -> Obj:
        return await self._client.update(resource, obj, namespace=self.namespace)

    async def update_status(self, resource: Resource, obj: Mapping[str, Any]) -> Obj:
        return await self._client.update_status(resource, obj, namespace=self.namespace)


async def gather_raising(*coros: Awaitable[Any]) -> None:
    """Run all concurrently, then raise the first error (after every one has finished;
    cancellation first)."""
    results = await asyncio.gather(*coros, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    for error in errors:
        if isinstance(error, asyncio.CancelledError):
            raise error
    if errors:
        raise errors[0]

