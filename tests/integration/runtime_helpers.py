"""Helpers for the runtime integration tests: a client for the test cluster, an instrumented
ListerWatcher, and running an informer for the length of a block."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.informer import SharedIndexInformer
from mpi_controller.runtime.reflector import ResourceListerWatcher
from mpi_controller.runtime.rest import RestClient
from tests.support import Cluster

Obj = dict[str, Any]


@asynccontextmanager
async def kube_client(cluster: Cluster, **options: Any) -> AsyncIterator[RestClient]:
    options.setdefault("qps", 0)
    kube = await RestClient.from_kubeconfig(cluster.kubeconfig, user_agent="mpi-controller-tests",
                                            **options)
    try:
        yield kube
    finally:
        await kube.close()


class InstrumentedLW:
    """Wraps a real ListerWatcher: records every call and every 410 seen, and can hold new
    requests (``hold``/``release``) so a test can change the world while the reflector waits."""

    def __init__(self, inner: ResourceListerWatcher) -> None:
        self.inner = inner
        self.resource = inner.resource
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.gone: list[str] = []
        self._open = asyncio.Event()
        self._open.set()
        self._current: Any = None

    def count(self, verb: str) -> int:
        return sum(1 for v, _ in self.calls if v == verb)

    def syncs(self) -> int:
        """LISTs and streaming lists (watches with sendInitialEvents)."""
        return sum(1 for v, p in self.calls if v == "list" or p.get("send_initial_events"))

    async def hold(self) -> None:
        """Block new lists/watches and end the current watch."""
        self._open.clear()
        if self._current is not None:
            await self._current.aclose()

    def release(self) -> None:
        self._open.set()

    async def list(self, **params: Any) -> Obj:
        await self._open.wait()
        self.calls.append(("list", params))
        try:
            return await self.inner.list(**params)
        except ApiError as exc:
            if exc.is_gone():
                self.gone.append("list")
            raise

    def watch(self, **params: Any) -> AsyncIterator[Obj]:
        return self._watch(params)

    async def _watch(self, params: dict[str, Any]) -> AsyncIterator[Obj]:
        await self._open.wait()
        self.calls.append(("watch", params))
        stream = self.inner.watch(**params)
        self._current = stream
        try:
            async for event in stream:
                if event.get("type") == "ERROR" and event["object"].get("code") == 410:
                    self.gone.append("watch")
                yield event
        except ApiError as exc:
            if exc.is_gone():
                self.gone.append("watch")
            raise
        finally:
            self._current = None
            await stream.aclose()  # type: ignore[attr-defined]


@asynccontextmanager
async def running(informer: SharedIndexInformer) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(informer.run())
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def cache_state(informer: SharedIndexInformer) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in informer.indexer.list()}
