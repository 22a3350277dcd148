"""RestClient and EventRecorder against the real API server: verbs, patch types, and the
error classes the server actually returns (404, 409 AlreadyExists/Conflict, 410)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from kubernetes import client as k8s

from mpi_controller.kube.resources import CONFIGMAPS, SERVICES
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.rest import RestClient
from tests.integration.runtime_helpers import kube_client
from tests.support import Cluster, unique_name, wait_for

pytestmark = pytest.mark.cluster


@pytest_asyncio.fixture(loop_scope="function")
async def kube(cluster: Cluster) -> AsyncIterator[RestClient]:
    async with kube_client(cluster) as k:
        yield k


def cm(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}


async def raises(coro: Any) -> ApiError:
    with pytest.raises(ApiError) as err:
        await coro
    return err.value


async def test_crud_and_error_classification(kube: RestClient, namespace: str) -> None:
    created = await kube.create(CONFIGMAPS, cm("a", app="x"), namespace=namespace)
    assert created["metadata"]["namespace"] == namespace
    assert (await kube.get(CONFIGMAPS, "a", namespace=namespace))["data"] == {"k": "v"}

    err = await raises(kube.create(CONFIGMAPS, cm("a"), namespace=namespace))
    assert err.is_already_exists()
    assert not err.is_conflict()
    assert err.status == 409

    err = await raises(kube.get(CONFIGMAPS, "missing", namespace=namespace))
    assert err.is_not_found()
    assert err.message == 'configmaps "missing" not found'

    stale = dict(created, data={"k": "v2"})
    updated = await kube.update(CONFIGMAPS, stale, namespace=namespace)
    err = await raises(kube.update(CONFIGMAPS, stale, namespace=namespace))  # old RV
    assert err.is_conflict()
    assert not err.is_retriable()

    listed = await kube.list(CONFIGMAPS, namespace=namespace, label_selector="app=x")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    assert int(listed["metadata"]["resourceVersion"]) >= int(updated["metadata"]["resourceVersion"])

    err = await raises(kube.delete(CONFIGMAPS, "a", namespace=namespace,
                                   preconditions={"uid": "not-the-uid"}))
    assert err.is_conflict()
    await kube.delete(CONFIGMAPS, "a", namespace=namespace, propagation_policy="Background",
                      preconditions={"uid": created["metadata"]["uid"]})
    assert (await raises(kube.get(CONFIGMAPS, "a", namespace=namespace))).is_not_found()


async def test_patch_types_and_server_side_apply(kube: RestClient, namespace: str) -> None:
    await kube.create(CONFIGMAPS, cm("p"), namespace=namespace)
    out = await kube.patch(CONFIGMAPS, "p", {"data": {"m": "1"}}, namespace=namespace)
    assert out["data"] == {"k": "v", "m": "1"}
    out = await kube.patch(CONFIGMAPS, "p", [{"op": "remove", "path": "/data/k"}],
                           namespace=namespace, patch_type="json")
    assert out["data"] == {"m": "1"}
    out = await kube.patch(CONFIGMAPS, "p", {"metadata": {"labels": {"s": "1"}}},
                           namespace=namespace, patch_type="strategic")
    assert out["metadata"]["labels"] == {"s": "1"}

    intent = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "ssa", "namespace": namespace}, "data": {"owned": "a"}}
    out = await kube.patch(CONFIGMAPS, "ssa", intent, namespace=namespace, patch_type="apply",
                           field_manager="first")
    assert out["data"] == {"owned": "a"}
    rival = dict(intent, data={"owned": "b"})
    err = await raises(kube.patch(CONFIGMAPS, "ssa", rival, namespace=namespace,
                                  patch_type="apply", field_manager="second"))
    assert err.status == 409
    assert err.is_conflict()
    out = await kube.patch(CONFIGMAPS, "ssa", rival, namespace=namespace, patch_type="apply",
                           field_manager="second", force=True)
    assert out["data"] == {"owned": "b"}


async def test_update_status(kube: RestClient, namespace: str) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
           "spec": {"type": "LoadBalancer", "ports": [{"port": 80}],
                    "allocateLoadBalancerNodePorts": False}}
    created = await kube.create(SERVICES, svc, namespace=namespace)
    created["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}
    out = await kube.update_status(SERVICES, created, namespace=namespace)
    assert [i["ip"] for i in out["status"]["loadBalancer"]["ingress"]] == ["192.0.2.10"]


async def test_watch_from_a_too_old_resource_version_is_gone(
    kube: RestClient, namespace: str, cluster: Cluster
) -> None:
    """The API answers a watch below its window with an ERROR event carrying a 410 Status.

    The version comes from a ConfigMap written before etcd was compacted; on the local
    cluster the API server is restarted too, so its watch cache starts after the compaction
    (a young cluster has not compacted on its own yet: kube-apiserver does every 5 minutes)."""
    old = await kube.create(CONFIGMAPS, cm("old"), namespace=namespace)
    await kube.delete(CONFIGMAPS, "old", namespace=namespace)
    too_old = old["metadata"]["resourceVersion"]
    if cluster.local:
        cluster.compact_etcd()
        cluster.restart_apiserver()
    async with kube.watch(CONFIGMAPS, namespace=namespace, resource_version=too_old,
                          timeout_seconds=5) as w:
        event = await anext(w)
    assert event["type"] == "ERROR"
    err = ApiError.from_status(event["object"])
    assert err.is_gone()
    assert err.status == 410


async def test_watch_delivers_changes_and_bookmarks(kube: RestClient, namespace: str) -> None:
    """Changes arrive in order; a bookmark (sent ~2 s before the server-side timeout, once
    the watch cache has moved past the watcher) carries a newer RV without an object."""
    rv = (await kube.list(CONFIGMAPS, namespace=namespace))["metadata"]["resourceVersion"]
    await kube.create(CONFIGMAPS, cm("w", watched="yes"), namespace=namespace)
    await kube.patch(CONFIGMAPS, "w", {"data": {"x": "1"}}, namespace=namespace)
    await kube.delete(CONFIGMAPS, "w", namespace=namespace)
    seen = []
    async with kube.watch(CONFIGMAPS, namespace=namespace, resource_version=rv,
                          label_selector="watched=yes", timeout_seconds=5) as w:
        async for event in w:
            seen.append((event["type"], event["object"]["metadata"]["resourceVersion"]))
            if len(seen) == 3:  # now move the watch cache past this watcher, unseen by it
                other = await kube.create(CONFIGMAPS, cm("unwatched"), namespace=namespace)
    assert [t for t, _ in seen[:3]] == ["ADDED", "MODIFIED", "DELETED"]
    bookmarks = [int(rv) for t, rv in seen[3:] if t == "BOOKMARK"]
    assert bookmarks
    assert max(bookmarks) >= int(other["metadata"]["resourceVersion"])


async def test_event_recorder_aggregation_is_visible_via_the_api(
    kube: RestClient, kube_api: Any, namespace: str
) -> None:
    obj = await kube.create(CONFIGMAPS, cm("subject"), namespace=namespace)
    recorder = EventRecorder(kube, "runtime-test")
    task = asyncio.create_task(recorder.run())
    try:
        for _ in range(3):
            recorder.event(obj, "Warning", "Broken", "the same message")
        recorder.event(obj, "Normal", "Fine", "é" * 700)
        await asyncio.wait_for(recorder.flush(), 30)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    events = k8s.CoreV1Api(kube_api).list_namespaced_event(namespace).items
    by_reason = {e.reason: e for e in events if e.source.component == "runtime-test"}
    assert set(by_reason) == {"Broken", "Fine"}
    broken = by_reason["Broken"]
    assert broken.count == 3
    assert broken.type == "Warning"
    assert broken.involved_object.uid == obj["metadata"]["uid"]
    assert broken.involved_object.kind == "ConfigMap"
    assert broken.last_timestamp >= broken.first_timestamp
    assert by_reason["Fine"].message == "é" * 510 + "..."  # 1023 bytes: cut within 1021, then ...


async def test_a_namespace_being_deleted_is_recognised_and_its_creates_held(
    kube: RestClient, kube_api: Any
) -> None:
    """kube-apiserver's NamespaceLifecycle answer, as the client classifies and holds it: a
    namespace kept Terminating by a ConfigMap's finalizer refuses creates with the
    NamespaceTerminating cause; the client's next create there fails the same way at once."""
    core = k8s.CoreV1Api(kube_api)
    name = unique_name("term")
    core.create_namespace({"metadata": {"name": name}})
    held = cm("held")
    held["metadata"]["finalizers"] = ["mpi-controller.test/hold"]
    await kube.create(CONFIGMAPS, held, namespace=name)
    core.delete_namespace(name)
    try:
        wait_for(lambda: core.read_namespace(name).status.phase == "Terminating", timeout=30,
                 what=f"namespace {name} Terminating")
        first = await raises(kube.create(CONFIGMAPS, cm("new"), namespace=name))
        assert first.status == 403
        assert first.reason == "Forbidden"
        assert first.is_namespace_terminating()
        assert first.message.endswith(f"unable to create new content in namespace {name} "
                                      "because it is being terminated")
        assert kube.terminating.refusal(name) is not None
        again = await raises(kube.create(SERVICES, {"metadata": {"name": "s"}, "spec": {
            "ports": [{"port": 80}]}}, namespace=name))
        assert (again.status, again.reason, again.message) == (403, "Forbidden", first.message)
        # Updates are not creates: the finalizer can still be removed.
        patched = await kube.patch(CONFIGMAPS, "held", {"metadata": {"finalizers": None}},
                                   namespace=name)
        assert "finalizers" not in patched["metadata"]
    finally:
        try:
            core.patch_namespaced_config_map("held", name, {"metadata": {"finalizers": None}})
        except k8s.ApiException as err:  # already released, and the namespace emptied
            if err.status != 404:
                raise
    # The namespace itself goes when kube-controller-manager's namespace controller next
    # passes over it: up to minutes after an API server restart of an earlier test (its
    # discovery and its per-namespace backoff), which is not this client's behaviour.
