"""Informers against the real API server: staying in sync through watch timeouts, an API
server restart and a watch from a compacted resourceVersion; bookmarks moving the RV.

Behaviours from client-go ``reflector.go``: a watch that times out is re-opened from the last
RV without a relist; a 410 makes the reflector relist, and objects deleted meanwhile reach
``OnDelete`` as ``DeletedFinalStateUnknown``; bookmarks only advance the RV. Each runs with the
initial state from a paged LIST and from a streaming list (WatchList, sendInitialEvents).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from kubernetes import client as k8s

from mpi_controller.kube.resources import CONFIGMAPS, PODS
from mpi_controller.runtime.cache import DeletedFinalStateUnknown
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.informer import (
    InformerFactory,
    SharedIndexInformer,
    drop_managed_fields,
)
from mpi_controller.runtime.reflector import ResourceListerWatcher
from mpi_controller.runtime.rest import RestClient
from tests.integration.runtime_helpers import InstrumentedLW, cache_state, kube_client, running
from tests.support import Cluster, async_wait_for

pytestmark = pytest.mark.cluster
SYNC_MODES = pytest.mark.parametrize("watch_list", [False, True], ids=["list", "watch-list"])


def first_syncs(informer: Any, watch_list: bool) -> int:
    """The syncs of a first sync: one; two where a streaming list was asked of a server without
    the WatchList feature (1.30's defaults: the request is refused, then the reflector LISTs)."""
    return 2 if watch_list and not informer.reflector.watch_list else 1


@pytest_asyncio.fixture(loop_scope="function")
async def kube(cluster: Cluster) -> AsyncIterator[RestClient]:
    async with kube_client(cluster) as k:
        yield k


def informer_for(kube: RestClient, namespace: str, *, label_selector: str | None = None,
                 **options: Any) -> tuple[SharedIndexInformer, InstrumentedLW]:
    lw = InstrumentedLW(ResourceListerWatcher(kube, CONFIGMAPS, namespace=namespace,
                                              label_selector=label_selector))
    informer = SharedIndexInformer(lw, transform=drop_managed_fields, **options)
    return informer, lw


def api_state(kube_api: Any, namespace: str) -> dict[str, str]:
    items = k8s.CoreV1Api(kube_api).list_namespaced_config_map(namespace).items
    return {i.metadata.name: i.metadata.resource_version for i in items}


def cm(name: str, value: str = "0") -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"v": value}}


async def converged(informer: SharedIndexInformer, kube_api: Any, namespace: str,
                    timeout: float = 60) -> None:
    await async_wait_for(lambda: cache_state(informer) == api_state(kube_api, namespace),
                         timeout=timeout, interval=0.2, what="cache to equal the API")


@SYNC_MODES
async def test_informer_stays_in_sync_through_watch_timeouts(
    watch_list: bool, kube: RestClient, kube_api: Any, namespace: str
) -> None:
    informer, lw = informer_for(kube, namespace, min_watch_timeout=1.0,  # watches of 1-2 s
                                watch_list=watch_list)
    seen: list[str] = []
    mine = informer.add_event_handler  # count only our objects (not kube-root-ca.crt)
    mine(on_add=lambda o: o["metadata"]["name"].startswith("c") and seen.append("add"),
         on_update=lambda o, n: seen.append("update"),
         on_delete=lambda o: seen.append("delete"))
    async with running(informer):
        await async_wait_for(informer.has_synced, timeout=30, what="initial sync")
        for i in range(40):
            await kube.create(CONFIGMAPS, cm(f"c{i}"), namespace=namespace)
            if i % 3 == 0:
                await kube.patch(CONFIGMAPS, f"c{i}", {"data": {"v": "1"}}, namespace=namespace)
            if i % 5 == 0:
                await kube.delete(CONFIGMAPS, f"c{i}", namespace=namespace)
            await asyncio.sleep(0.15)
        await converged(informer, kube_api, namespace)
    assert lw.count("watch") >= 3
    # a timed-out watch is re-opened, never relisted
    assert lw.syncs() == first_syncs(informer, watch_list)
    assert (seen.count("add"), seen.count("update"), seen.count("delete")) == (40, 14, 8)
    assert all("managedFields" not in o["metadata"] for o in informer.indexer.list())


@SYNC_MODES
async def test_bookmarks_advance_the_resource_version(
    watch_list: bool, kube: RestClient, kube_api: Any, namespace: str
) -> None:
    """Changes the informer does not see (filtered out) still move its RV via bookmarks."""
    informer, lw = informer_for(kube, namespace, label_selector="watched=yes",
                                min_watch_timeout=4.0, watch_list=watch_list)
    calls: list[Any] = []
    informer.add_event_handler(on_add=calls.append, on_update=lambda o, n: calls.append(n),
                               on_delete=calls.append)
    async with running(informer):
        await async_wait_for(informer.has_synced, timeout=30, what="initial sync")
        synced_rv = int(informer.last_sync_resource_version)
        await asyncio.sleep(0.5)  # the watch is open
        other = await kube.create(CONFIGMAPS, cm("unwatched"), namespace=namespace)
        target = int(other["metadata"]["resourceVersion"])
        await async_wait_for(lambda: int(informer.last_sync_resource_version) >= target,
                             timeout=30, what="a bookmark past the unwatched change")
    assert target > synced_rv
    assert calls == []
    assert lw.syncs() == first_syncs(informer, watch_list)


@SYNC_MODES
@pytest.mark.timeout(300)
async def test_informer_survives_an_apiserver_restart(
    watch_list: bool, kube: RestClient, kube_api: Any, namespace: str, cluster: Cluster
) -> None:
    if not cluster.local:
        pytest.skip("needs the local control plane")
    informer, lw = informer_for(kube, namespace, watch_list=watch_list)
    async with running(informer):
        for i in range(5):
            await kube.create(CONFIGMAPS, cm(f"before{i}"), namespace=namespace)
        await converged(informer, kube_api, namespace)
        await asyncio.to_thread(cluster.restart_apiserver)
        await retry_api(lambda: kube.delete(CONFIGMAPS, "before0", namespace=namespace))
        for i in range(5):
            await kube.create(CONFIGMAPS, cm(f"after{i}"), namespace=namespace)
        await converged(informer, kube_api, namespace, timeout=120)
    assert "before0" not in cache_state(informer)
    assert lw.count("watch") >= 2


@SYNC_MODES
@pytest.mark.timeout(300)
async def test_watch_from_a_compacted_rv_relists_with_tombstones(
    watch_list: bool, kube: RestClient, kube_api: Any, namespace: str, cluster: Cluster
) -> None:
    """Hold the reflector, delete and create objects, compact etcd and restart the API server
    (so neither etcd nor the new watch cache can serve the old RV). On release the watch from
    the old RV gets 410; the relist reports the deletions it missed as tombstones."""
    if not cluster.local:
        pytest.skip("needs the local control plane")
    informer, lw = informer_for(kube, namespace, watch_list=watch_list)
    deleted: list[Any] = []
    informer.add_event_handler(on_delete=deleted.append)
    for name in ("keep", "gone1", "gone2"):
        await kube.create(CONFIGMAPS, cm(name), namespace=namespace)
    async with running(informer):
        await converged(informer, kube_api, namespace)
        await asyncio.sleep(1.5)  # past the very-short-watch window: a close means re-watch
        await lw.hold()
        for name in ("gone1", "gone2"):
            await kube.delete(CONFIGMAPS, name, namespace=namespace)
        await kube.create(CONFIGMAPS, cm("new"), namespace=namespace)
        compacted = await asyncio.to_thread(cluster.compact_etcd)
        assert compacted > int(informer.last_sync_resource_version)
        await asyncio.to_thread(cluster.restart_apiserver)
        await retry_api(lambda: kube.list(CONFIGMAPS, namespace=namespace, limit=1))
        syncs_before = lw.syncs()
        lw.release()
        await converged(informer, kube_api, namespace, timeout=120)
    assert lw.gone == ["watch"]
    assert lw.syncs() == syncs_before + 1
    # kube-root-ca.crt is kube-controller-manager's, published whenever it catches up with the
    # namespace (it may be slow to after an API server restart): not one of this test's objects
    assert sorted(set(cache_state(informer)) - {"kube-root-ca.crt"}) == ["keep", "new"]
    assert sorted(d.key for d in deleted if isinstance(d, DeletedFinalStateUnknown)) == [
        f"{namespace}/gone1", f"{namespace}/gone2",
    ]


async def test_factory_shares_informers_and_listers_read_like_the_api(
    kube: RestClient, namespace: str
) -> None:
    await kube.create(CONFIGMAPS, cm("x"), namespace=namespace)
    factory = InformerFactory(kube)
    cms = factory.informer_for(CONFIGMAPS, namespace)
    assert factory.informer_for(CONFIGMAPS, namespace) is cms
    run = asyncio.create_task(factory.run())
    try:
        assert await factory.wait_for_cache_sync(timeout=30)
        pods = factory.informer_for(PODS, namespace)  # added while running: starts at once
        assert await factory.wait_for_cache_sync(timeout=30)
        assert pods.lister().namespaced(namespace).list() == []
        lister = cms.lister().namespaced(namespace)
        assert lister.get("x")["data"] == {"v": "0"}
        with pytest.raises(ApiError) as err:
            lister.get("y")
        assert err.value.is_not_found()
    finally:
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)


async def retry_api(call: Any, timeout: float = 60) -> Any:
    """Retry a call while the API server comes back."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await call()
        except ApiError as exc:
            if not exc.is_retriable() or asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)
