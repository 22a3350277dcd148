"""What a controller needs of the API server: the :class:`KubeClient` protocol.

Raw-JSON verbs on any :class:`~mpi_controller.kube.resources.Resource`, plain dicts in and out;
every failure an :class:`~mpi_controller.runtime.errors.ApiError`. Implemented by
:class:`~mpi_controller.runtime.rest.RestClient` (a real API server) and by
:class:`~mpi_controller.testing.FakeApi` (in memory, for tests). :meth:`KubeClient.watch`
returns :class:`WatchEvents`: an async iterator of raw event dicts (``{"type": ...,
"object": {...}}``; ``ERROR`` events are yielded as they come) that can be closed.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal, Protocol

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.codec import Codec

__all__ = ["PATCH_CONTENT_TYPES", "KubeClient", "PatchType", "WatchEvents"]

PatchType = Literal["merge", "json", "strategic", "apply"]

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
"""The content type of each patch type."""


class WatchEvents(Protocol):
    """An open watch: an async iterator of raw event dicts that can be closed."""

    def __aiter__(self) -> WatchEvents: ...

    async def __anext__(self) -> Obj: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> WatchEvents: ...

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None: ...


class KubeClient(Protocol):
    """What the controller needs of the API: raw-JSON verbs on any :class:`Resource`.

    :class:`~mpi_controller.runtime.rest.RestClient` talks to a real API server;
    :class:`~mpi_controller.testing.FakeApi` is an in-memory one for tests.
    Every failure is an :class:`~mpi_controller.runtime.errors.ApiError`.

    ``result=False`` (``create``, ``update_status``, ``delete``) says the caller does not read
    the answer: a client may then return ``{}`` instead of decoding the object the API server
    sent back (the decode is a noticeable part of a write's CPU; most writes' answers are
    never read, as the informers deliver the objects anyway)."""

    async def create(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None,
                     result: bool = True) -> Obj: ...

    async def get(self, resource: Resource, name: str, *,
                  namespace: str | None = None) -> Obj: ...

    async def list(self, resource: Resource, *, namespace: str | None = None,
                   label_selector: str | None = None, field_selector: str | None = None,
                   limit: int | None = None, continue_: str | None = None,
                   resource_version: str | None = None,
                   resource_version_match: str | None = None,
                   timeout_seconds: int | None = None, codec: Codec | None = None) -> Obj: ...

    def watch(self, resource: Resource, *, namespace: str | None = None,
              label_selector: str | None = None, field_selector: str | None = None,
              resource_version: str | None = None, allow_watch_bookmarks: bool = True,
              timeout_seconds: int | None = None, send_initial_events: bool | None = None,
              resource_version_match: str | None = None,
              codec: Codec | None = None) -> WatchEvents: ...

    async def update(self, resource: Resource, body: Mapping[str, Any], *,
                     namespace: str | None = None, field_manager: str | None = None) -> Obj: ...

    async def update_status(self, resource: Resource, body: Mapping[str, Any], *,
                            namespace: str | None = None,
                            field_manager: str | None = None, result: bool = True) -> Obj: ...

    async def patch(self, resource: Resource, name: str, body: Any, *,
                    namespace: str | None = None, patch_type: PatchType = "merge",
                    field_manager: str | None = None, force: bool | None = None,
                    subresource: str | None = None) -> Obj: ...

    async def delete(self, resource: Resource, name: str, *, namespace: str | None = None,
                     propagation_policy: str | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     grace_period_seconds: int | None = None, result: bool = True) -> Obj: ...

    async def close(self) -> None: ...
