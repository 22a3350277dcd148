"""The in-memory API server (mpi_controller.testing) answers as kube-apiserver v1.36 does.

The upstream behaviour each test matches is named in it: ``k8s.io/apiserver``'s generic
registry (``registry/generic/registry/store.go``: create, update, no-op updates, finalizers,
``deletionFinalizersForGarbageCollection``, ``markAsDeleting``, ``ReturnDeletedObject``), its
storage (``storage/interfaces.go`` preconditions and continue tokens, ``storage/etcd3/errors.go``
410 texts), its watch cache (``cacher/cache_watcher.go`` ``convertToWatchEvent``,
``watch_cache_history.go`` "too old resource version", the initial-events-end bookmark),
``apimachinery``'s Status builders (``pkg/api/errors``), list/watch option validation
(``apis/meta/internalversion/validation``) and the CRD strategies of
``apiextensions-apiserver`` (status subresource, generation). The last tests run the real
runtime (informers, event recorder, leader election) on it.
"""

from __future__ import annotations

import asyncio
import base64
import random
from typing import Any, TypedDict

import pytest

from mpi_controller.kube.resources import (
    CONFIGMAPS,
    EVENTS,
    JOBS,
    LEASES,
    NAMESPACES,
    PODS,
    SERVICES,
    Resource,
)
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.codec import Codec, loads
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.informer import SharedIndexInformer
from mpi_controller.runtime.kubeclient import KubeClient
from mpi_controller.runtime.leaderelection import LeaderElector, LeaseLock
from mpi_controller.runtime.reflector import ResourceListerWatcher
from mpi_controller.testing import (
    INITIAL_EVENTS_END,
    FakeApi,
    FakeWatch,
    Request,
    conflict,
    connection_error,
    json_patch,
    merge_patch,
    too_many_requests,
)
from tests.unit.runtime.fakes import FixedRandom, Running, settle

Obj = dict[str, Any]

WIDGETS = Resource("example.com", "v1", "widgets", kind="Widget")
GADGETS = Resource("example.com", "v1", "gadgets", kind="Gadget")
UNKNOWN = Resource("example.com", "v1", "unknowns", kind="Unknown")


def make_api(**options: Any) -> FakeApi:
    api = FakeApi(clock=ManualClock(), **options)
    api.register(WIDGETS, status_subresource=True)
    api.register(GADGETS)
    return api


def pod(name: str, ns: str = "ns", **labels: str) -> Obj:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def cm(name: str, ns: str = "ns", **data: str) -> Obj:
    return {"metadata": {"name": name, "namespace": ns}, "data": data}


def widget(name: str, ns: str = "ns", size: int = 1) -> Obj:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": ns}, "spec": {"size": size}}


def names(page: Obj) -> list[str]:
    return [item["metadata"]["name"] for item in page["items"]]


async def next_event(watch: FakeWatch) -> Obj:
    """The next event; fails (after 1 s of real time) if none comes."""
    return await asyncio.wait_for(anext(watch), 1.0)


async def rest(watch: FakeWatch) -> list[tuple[str, str, str]]:
    """End the watch and return what was still queued: ``(type, name, resourceVersion)``."""
    await watch.open()
    watch.end()
    return [(e["type"], e["object"]["metadata"].get("name", ""),
             e["object"]["metadata"]["resourceVersion"]) async for e in watch]


async def raises(coro: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        await coro
    return info.value


def test_fake_api_is_a_kube_client() -> None:
    api: KubeClient = FakeApi()  # mypy checks the protocol; this checks the verbs exist
    assert all(callable(getattr(api, verb)) for verb in (
        "create", "get", "list", "watch", "update", "update_status", "patch", "delete", "close"))


# -- create and get --------------------------------------------------------------------------------


async def test_writes_without_a_result_answer_an_empty_object_and_still_write() -> None:
    api = make_api()
    assert await api.create(PODS, pod("a"), result=False) == {}
    stored = await api.get(PODS, "a", namespace="ns")
    assert await api.update_status(PODS, {**stored, "status": {"phase": "Running"}},
                                   result=False) == {}
    assert (await api.get(PODS, "a", namespace="ns"))["status"] == {"phase": "Running"}
    assert await api.delete(PODS, "a", namespace="ns", result=False) == {}
    with pytest.raises(ApiError) as err:
        await api.get(PODS, "a", namespace="ns")
    assert err.value.is_not_found()


async def test_create_sets_identity_and_returns_a_copy() -> None:
    api = make_api(seed=7)
    created = await api.create(PODS, {**pod("a"), "status": {"phase": "Running"}})
    meta = created["metadata"]
    assert created["kind"] == "Pod"
    assert created["apiVersion"] == "v1"
    assert meta["resourceVersion"] == "1"
    assert meta["generation"] == 1
    assert meta["creationTimestamp"] == "2024-01-01T00:00:00Z"
    expected_uid = str(__import__("uuid").UUID(int=random.Random(7).getrandbits(128), version=4))
    assert meta["uid"] == expected_uid
    assert "status" not in created  # pods have a status subresource: create drops it
    created["metadata"]["labels"]["x"] = "mutated"
    fetched = await api.get(PODS, "a", namespace="ns")
    assert fetched["metadata"]["labels"] == {}
    assert fetched == {**created, "metadata": {**created["metadata"], "labels": {}}}
    config = await api.create(CONFIGMAPS, cm("c", k="v"))
    assert config["metadata"]["resourceVersion"] == "2"
    assert "generation" not in config["metadata"]  # configmaps have none
    assert api.resource_version == "2"


async def test_creation_time_follows_the_clock_and_nulls_are_dropped() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    clock.advance(61.5)
    created = await api.create(CONFIGMAPS, {"metadata": {"name": "c", "namespace": "ns",
                                                          "annotations": None},
                                            "data": {"a": "1", "b": None}})
    assert created["metadata"]["creationTimestamp"] == "2024-01-01T00:01:01Z"
    assert "annotations" not in created["metadata"]
    assert created["data"] == {"a": "1"}


async def test_generate_name_uses_the_servers_alphabet_and_retries() -> None:
    api = make_api(seed=3)
    first = await api.create(CONFIGMAPS, {"metadata": {"generateName": "job-", "namespace": "ns"}})
    name = first["metadata"]["name"]
    assert name.startswith("job-")
    assert len(name) == 9
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    again = make_api(seed=3)
    assert (await again.create(CONFIGMAPS, {"metadata": {
        "generateName": "job-", "namespace": "ns"}}))["metadata"]["name"] == name
    assert api.requests[-1].name == ""  # the request carried no name

    api.rng = FixedRandom(0.0)  # always the same suffix: every attempt collides
    await api.create(CONFIGMAPS, {"metadata": {"generateName": "x-", "namespace": "ns"}})
    err = await raises(api.create(CONFIGMAPS, {"metadata": {"generateName": "x-",
                                                            "namespace": "ns"}}))
    assert (err.status, err.reason) == (409, "AlreadyExists")
    assert err.message == ('configmaps "x-bbbbb" already exists, the server was not able to'
                           " generate a unique name for the object")


async def test_not_found_and_already_exists_are_the_servers_statuses() -> None:
    api = make_api()
    err = await raises(api.get(PODS, "missing", namespace="ns"))
    assert err.is_not_found()
    assert err.message == 'pods "missing" not found'
    assert err.body == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Failure", "message": 'pods "missing" not found',
                        "reason": "NotFound", "details": {"name": "missing", "kind": "pods"},
                        "code": 404}
    err = await raises(api.get(LEASES, "l", namespace="ns"))
    assert err.message == 'leases.coordination.k8s.io "l" not found'
    assert err.body is not None
    assert err.body["details"] == {"name": "l", "group": "coordination.k8s.io", "kind": "leases"}
    await api.create(WIDGETS, widget("w"))
    err = await raises(api.create(WIDGETS, widget("w")))
    assert err.is_already_exists()
    assert not err.is_conflict()
    assert err.message == 'widgets.example.com "w" already exists'


async def test_invalid_names_are_422_with_causes() -> None:
    api = make_api()
    err = await raises(api.create(CONFIGMAPS, {"metadata": {"namespace": "ns"}}))
    assert (err.status, err.reason) == (422, "Invalid")
    assert err.message == ('ConfigMap "" is invalid: metadata.name: Required value: name or'
                           " generateName is required")
    assert err.body is not None
    assert err.body["details"] == {
        "kind": "ConfigMap", "causes": [{
            "reason": "FieldValueRequired", "field": "metadata.name",
            "message": "Required value: name or generateName is required"}]}
    err = await raises(api.create(WIDGETS, widget("Big_Name")))
    assert err.message.startswith('Widget.example.com "Big_Name" is invalid: metadata.name:'
                                  ' Invalid value: "Big_Name": a lowercase RFC 1123 subdomain')
    err = await raises(api.create(SERVICES, {"metadata": {"name": "1svc", "namespace": "ns"}}))
    assert err.message.startswith('Service "1svc" is invalid: metadata.name: Invalid value:'
                                  ' "1svc": a DNS-1035 label must consist of')


async def test_requests_the_server_refuses_before_storage() -> None:
    api = make_api()
    err = await raises(api.get(UNKNOWN, "x", namespace="ns"))  # no such resource: the router
    assert (err.status, err.reason, err.message, err.body) == (
        404, "NotFound", "404 page not found\n", None)
    err = await raises(api.create(CONFIGMAPS, {"metadata": {"name": "c"}}))
    assert (err.status, err.reason) == (405, "MethodNotAllowed")
    err = await raises(api.create(CONFIGMAPS, cm("c", ns="a"), namespace="b"))
    assert (err.status, err.message) == (400, "the namespace of the provided object does not"
                                               " match the namespace sent on the request")
    with_rv = cm("c")
    with_rv["metadata"]["resourceVersion"] = "5"
    err = await raises(api.create(CONFIGMAPS, with_rv))
    assert (err.status, err.reason, err.message) == (
        500, "InternalError",
        "Internal error occurred: resourceVersion should not be set on objects to be created")
    with pytest.raises(ValueError, match="empty name for pods"):
        await api.get(PODS, "", namespace="ns")
    namespace = await api.create(NAMESPACES, {"metadata": {"name": "team", "namespace": "x"}})
    assert "namespace" not in namespace["metadata"]  # cluster-scoped
    assert (await api.get(NAMESPACES, "team", namespace="ignored"))["metadata"]["name"] == "team"


# -- update and the status subresource -------------------------------------------------------------


async def test_update_with_a_stale_resource_version_conflicts() -> None:
    api = make_api()
    first = await api.create(CONFIGMAPS, cm("c", a="1"))
    second = await api.update(CONFIGMAPS, {**first, "data": {"a": "2"}})
    assert second["metadata"]["resourceVersion"] == "2"
    err = await raises(api.update(CONFIGMAPS, {**first, "data": {"a": "3"}}))
    assert err.is_conflict()
    assert err.status == 409
    assert err.reason == "Conflict"
    assert err.message == ('Operation cannot be fulfilled on configmaps "c": the object has been'
                           " modified; please apply your changes to the latest version and try"
                           " again")
    assert err.body is not None
    assert err.body["details"] == {"name": "c", "kind": "configmaps"}
    unguarded = {"metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "4"}}
    assert (await api.update(CONFIGMAPS, unguarded))["metadata"]["resourceVersion"] == "3"
    other_uid = {**unguarded, "metadata": {**unguarded["metadata"], "uid": "not-it"}}
    err = await raises(api.update(CONFIGMAPS, other_uid))
    assert err.message == (
        'Operation cannot be fulfilled on configmaps "c": StorageError: invalid object, Code: 4,'
        " Key: /registry/configmaps/ns/c, ResourceVersion: 0, AdditionalErrorMsg: Precondition"
        f" failed: UID in precondition: not-it, UID in object meta: {first['metadata']['uid']}")
    err = await raises(api.update(CONFIGMAPS, cm("nope")))
    assert err.is_not_found()


async def test_an_update_that_changes_nothing_is_not_written() -> None:
    api = make_api()
    created = await api.create(CONFIGMAPS, cm("c", a="1"))
    watch = api.watch(CONFIGMAPS, resource_version="1")
    same = await api.update(CONFIGMAPS, created)
    assert same == created
    assert api.resource_version == "1"
    await api.patch(CONFIGMAPS, "c", {"data": {"a": "1"}}, namespace="ns")
    assert api.resource_version == "1"
    watch.end()
    assert [e async for e in watch] == []


async def test_status_subresource_separates_spec_and_status() -> None:
    api = make_api()
    created = await api.create(WIDGETS, {**widget("w"), "status": {"ready": True}})
    assert "status" not in created
    assert created["metadata"]["generation"] == 1
    with_status = await api.update_status(WIDGETS, {**created, "spec": {"size": 9},
                                                    "status": {"ready": True}})
    assert with_status["spec"] == {"size": 1}
    assert with_status["status"] == {"ready": True}
    assert with_status["metadata"]["generation"] == 1
    assert with_status["metadata"]["resourceVersion"] == "2"
    labelled = {**with_status, "metadata": {**with_status["metadata"], "labels": {"a": "b"}},
                "status": {"ready": False}}
    updated = await api.update(WIDGETS, labelled)
    assert updated["status"] == {"ready": True}  # update ignores status
    assert updated["metadata"]["labels"] == {"a": "b"}
    assert updated["metadata"]["generation"] == 1  # metadata changes keep the generation
    resized = await api.update(WIDGETS, {**updated, "spec": {"size": 2}})
    assert resized["metadata"]["generation"] == 2
    err = await raises(api.update_status(WIDGETS, with_status))  # stale
    assert err.is_conflict()
    cleared = await api.update_status(WIDGETS, {"metadata": {"name": "w", "namespace": "ns"}})
    assert "status" not in cleared
    assert cleared["spec"] == {"size": 2}
    err = await raises(api.update_status(CONFIGMAPS, cm("c")))
    assert (err.status, err.message) == (404, "404 page not found\n")


async def test_without_a_status_subresource_status_is_content() -> None:
    api = make_api()
    gadget = await api.create(GADGETS, {"metadata": {"name": "g", "namespace": "ns"},
                                        "status": {"phase": "new"}})
    assert gadget["status"] == {"phase": "new"}
    assert gadget["metadata"]["generation"] == 1
    changed = await api.update(GADGETS, {**gadget, "status": {"phase": "old"}})
    assert changed["status"] == {"phase": "old"}
    assert changed["metadata"]["generation"] == 2


# -- delete, finalizers and the garbage collector --------------------------------------------------


async def test_delete_answers_like_the_registry() -> None:
    api = make_api()
    config = await api.create(CONFIGMAPS, cm("c"))
    answer = await api.delete(CONFIGMAPS, "c", namespace="ns")
    assert answer == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                      "details": {"name": "c", "kind": "configmaps",
                                  "uid": config["metadata"]["uid"]}}
    assert api.stored(CONFIGMAPS, "c", namespace="ns") is None
    created = await api.create(PODS, pod("p"))
    deleted = await api.delete(PODS, "p", namespace="ns")  # pods return the object
    assert deleted == created
    err = await raises(api.delete(PODS, "p", namespace="ns"))
    assert err.message == 'pods "p" not found'


async def test_delete_preconditions_conflict() -> None:
    api = make_api()
    created = await api.create(CONFIGMAPS, cm("c"))
    err = await raises(api.delete(CONFIGMAPS, "c", namespace="ns", preconditions={"uid": "x"}))
    assert err.is_conflict()
    assert err.message.endswith(
        "Precondition failed: UID in precondition: x, UID in object meta:"
        f" {created['metadata']['uid']}")
    err = await raises(api.delete(CONFIGMAPS, "c", namespace="ns",
                                  preconditions={"resourceVersion": "0"}))
    assert err.message.endswith(
        "Precondition failed: ResourceVersion in precondition: 0, ResourceVersion in object"
        " meta: 1")
    await api.delete(CONFIGMAPS, "c", namespace="ns", preconditions={
        "uid": created["metadata"]["uid"], "resourceVersion": "1"})
    assert api.objects(CONFIGMAPS) == []
    await api.create(CONFIGMAPS, cm("d"))
    err = await raises(api.delete(CONFIGMAPS, "d", namespace="ns", propagation_policy="Later"))
    assert (err.status, err.message) == (422, 'DeleteOptions.meta.k8s.io "" is invalid:'
                                              ' propagationPolicy: Unsupported value: "Later":'
                                              ' supported values: "Foreground", "Background",'
                                              ' "Orphan", "nil"')


async def test_finalizers_keep_a_deleted_object_until_the_last_goes() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    api.register(WIDGETS, status_subresource=True)
    body = widget("w")
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    await api.create(WIDGETS, body)
    watch = api.watch(WIDGETS, namespace="ns", resource_version="1")
    clock.advance(5)
    terminating = await api.delete(WIDGETS, "w", namespace="ns")
    meta = terminating["metadata"]
    assert meta["deletionTimestamp"] == "2024-01-01T00:00:05Z"
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == 2
    assert meta["resourceVersion"] == "2"
    again = await api.delete(WIDGETS, "w", namespace="ns")  # already terminating: no write
    assert again == terminating
    meta["finalizers"] = []
    gone = await api.update(WIDGETS, terminating)
    assert gone["status"] == "Success"
    assert gone["details"]["name"] == "w"
    assert api.stored(WIDGETS, "w", namespace="ns") is None
    assert await rest(watch) == [("MODIFIED", "w", "2"), ("DELETED", "w", "3")]


async def test_propagation_policies_add_the_collectors_finalizers() -> None:
    api = make_api()
    await api.create(CONFIGMAPS, cm("f"))
    fore = await api.delete(CONFIGMAPS, "f", namespace="ns", propagation_policy="Foreground")
    assert fore["metadata"]["finalizers"] == ["foregroundDeletion"]
    job = await api.create(JOBS, {"metadata": {"name": "j", "namespace": "ns"}, "spec": {}})
    orphaning = await api.delete(JOBS, "j", namespace="ns")  # batch/v1 defaults to Orphan
    assert orphaning["metadata"]["finalizers"] == ["orphan"]
    assert orphaning["metadata"]["generation"] == job["metadata"]["generation"] + 1
    await api.create(CONFIGMAPS, cm("b"))
    gone = await api.delete(CONFIGMAPS, "b", namespace="ns", propagation_policy="Background")
    assert gone["status"] == "Success"


def owned(name: str, owner: Obj, kind: str = "ConfigMap") -> Obj:
    ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
           "controller": True, "blockOwnerDeletion": True}
    return {"metadata": {"name": name, "namespace": "ns", "ownerReferences": [ref]}}


async def test_collect_garbage_deletes_dependents_of_a_deleted_owner() -> None:
    api = make_api()
    owner = await api.create(WIDGETS, widget("w"))
    other = await api.create(WIDGETS, widget("v"))
    await api.create(CONFIGMAPS, owned("c1", owner))
    await api.create(PODS, owned("p1", owner))
    shared = owned("c2", owner)
    shared["metadata"]["ownerReferences"].append(owned("x", other)["metadata"]
                                                 ["ownerReferences"][0])
    await api.create(CONFIGMAPS, shared)
    assert api.collect_garbage() == []
    await api.delete(WIDGETS, "w", namespace="ns")
    writes = len(api.writes())
    assert api.collect_garbage() == [("pods", "ns", "p1"), ("configmaps", "ns", "c1")]
    assert [c["metadata"]["name"] for c in api.objects(CONFIGMAPS)] == ["c2"]
    c2 = api.stored(CONFIGMAPS, "c2", namespace="ns")
    assert c2 is not None
    assert [r["name"] for r in c2["metadata"]["ownerReferences"]] == ["v"]
    assert len(api.writes()) == writes  # the collector's work is not a request


async def test_collect_garbage_foreground_and_orphan() -> None:
    api = make_api()
    owner = await api.create(WIDGETS, widget("w"))
    await api.create(CONFIGMAPS, owned("c", owner))
    await api.delete(WIDGETS, "w", namespace="ns", propagation_policy="Foreground")
    assert api.stored(WIDGETS, "w", namespace="ns") is not None  # waits for its dependents
    assert api.collect_garbage() == [("configmaps", "ns", "c")]
    assert api.stored(WIDGETS, "w", namespace="ns") is None
    assert api.objects(CONFIGMAPS) == []

    owner = await api.create(WIDGETS, widget("o"))
    await api.create(CONFIGMAPS, owned("kept", owner))
    await api.delete(WIDGETS, "o", namespace="ns", propagation_policy="Orphan")
    assert api.collect_garbage() == []
    assert api.stored(WIDGETS, "o", namespace="ns") is None
    kept = api.stored(CONFIGMAPS, "kept", namespace="ns")
    assert kept is not None
    assert "ownerReferences" not in kept["metadata"]


# -- patch -----------------------------------------------------------------------------------------


def test_merge_and_json_patch_follow_the_rfcs() -> None:
    doc = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    assert merge_patch(doc, {"a": {"b": None, "e": 2}, "d": [3]}) == {
        "a": {"c": [1, 2], "e": 2}, "d": [3]}
    assert doc == {"a": {"b": 1, "c": [1, 2]}, "d": "x"}  # not modified
    assert json_patch(doc, [
        {"op": "add", "path": "/a/c/-", "value": 3},
        {"op": "add", "path": "/a/c/0", "value": 0},
        {"op": "replace", "path": "/d", "value": "y"},
        {"op": "remove", "path": "/a/b"},
        {"op": "copy", "from": "/d", "path": "/e~1f"},
        {"op": "move", "from": "/e~1f", "path": "/g"},
        {"op": "test", "path": "/g", "value": "y"},
    ]) == {"a": {"c": [0, 1, 2, 3]}, "d": "y", "g": "y"}


async def test_patch_types_and_their_errors() -> None:
    api = make_api()
    await api.create(CONFIGMAPS, {**cm("c", a="1"),
                                  "metadata": {"name": "c", "namespace": "ns",
                                               "labels": {"x": "1", "y": "2"}}})
    merged = await api.patch(CONFIGMAPS, "c", {"metadata": {"labels": {"x": None, "z": "3"}}},
                             namespace="ns")
    assert merged["metadata"]["labels"] == {"y": "2", "z": "3"}
    patched = await api.patch(CONFIGMAPS, "c", [{"op": "add", "path": "/data/b", "value": "2"}],
                              namespace="ns", patch_type="json")
    assert patched["data"] == {"a": "1", "b": "2"}
    strategic = await api.patch(CONFIGMAPS, "c", {"data": {"a": "9"}}, namespace="ns",
                                patch_type="strategic")
    assert strategic["data"] == {"a": "9", "b": "2"}
    failed = await raises(api.patch(CONFIGMAPS, "c", [{"op": "test", "path": "/data/a",
                                                       "value": "0"}],
                                    namespace="ns", patch_type="json"))
    assert (failed.status, failed.reason, failed.message) == (
        422, "Invalid", "the server rejected our request due to an error in our request")
    failed = await raises(api.patch(CONFIGMAPS, "c", {"op": "add"}, namespace="ns",
                                    patch_type="json"))
    assert failed.status == 400
    stale = await raises(api.patch(CONFIGMAPS, "c", {"metadata": {"resourceVersion": "1"}},
                                   namespace="ns"))
    assert stale.is_conflict()
    missing = await raises(api.patch(CONFIGMAPS, "nope", {}, namespace="ns"))
    assert missing.message == 'configmaps "nope" not found'
    original = await api.list(CONFIGMAPS, resource_version="1", resource_version_match="Exact")
    assert original["items"][0]["metadata"]["labels"] == {"x": "1", "y": "2"}  # history intact
    assert original["items"][0]["data"] == {"a": "1"}
    with pytest.raises(NotImplementedError, match="server-side apply"):
        await api.patch(CONFIGMAPS, "c", {}, namespace="ns", patch_type="apply",
                        field_manager="m")
    with pytest.raises(NotImplementedError, match="directives"):
        await api.patch(CONFIGMAPS, "c", {"data": {"$patch": "replace"}}, namespace="ns",
                        patch_type="strategic")


async def test_status_patch_changes_only_status() -> None:
    api = make_api()
    await api.create(WIDGETS, widget("w"))
    patched = await api.patch(WIDGETS, "w", {"spec": {"size": 5}, "status": {"ready": True}},
                              namespace="ns", subresource="status")
    assert patched["spec"] == {"size": 1}
    assert patched["status"] == {"ready": True}
    assert patched["metadata"]["generation"] == 1
    spec = await api.patch(WIDGETS, "w", {"spec": {"size": 5}, "status": {"ready": False}},
                           namespace="ns")
    assert spec["spec"] == {"size": 5}
    assert spec["status"] == {"ready": True}
    assert spec["metadata"]["generation"] == 2


# -- list ------------------------------------------------------------------------------------------


async def test_list_selectors() -> None:
    api = make_api()
    api.add(PODS, pod("a", app="web", tier="front"))
    api.add(PODS, pod("b", app="web"))
    api.add(PODS, pod("c", app="db", tier="back"))
    api.add(PODS, pod("d", ns="other", app="web"))

    async def select(**options: Any) -> list[str]:
        return names(await api.list(PODS, **options))

    assert await select() == ["a", "b", "c", "d"]
    assert await select(namespace="ns") == ["a", "b", "c"]
    assert await select(label_selector="app=web") == ["a", "b", "d"]
    assert await select(label_selector="app==web,tier") == ["a"]
    assert await select(label_selector="app!=web") == ["c"]
    assert await select(label_selector="tier in (front,back)") == ["a", "c"]
    assert await select(label_selector="tier notin (front)", namespace="ns") == ["b", "c"]
    assert await select(label_selector="!tier", namespace="ns") == ["b"]
    assert await select(field_selector="metadata.name=b") == ["b"]
    assert await select(field_selector="metadata.namespace!=ns") == ["d"]
    api.modify(PODS, "c", lambda p: p.update(status={"phase": "Running"}), namespace="ns")
    assert await select(field_selector="status.phase=Running") == ["c"]
    err = await raises(api.list(PODS, field_selector="spec.foo=bar"))
    assert (err.status, err.reason, err.message) == (
        400, "BadRequest", "field label not supported: spec.foo")
    err = await raises(api.list(PODS, label_selector="a in b"))
    assert err.status == 400


async def test_list_items_carry_their_kind_only_for_custom_resources() -> None:
    api = make_api()
    api.add(PODS, pod("p"))
    api.add(WIDGETS, widget("w"))
    pods = await api.list(PODS)
    assert (pods["kind"], pods["apiVersion"]) == ("PodList", "v1")
    assert "kind" not in pods["items"][0]
    assert "apiVersion" not in pods["items"][0]
    widgets = await api.list(WIDGETS)
    assert widgets["kind"] == "WidgetList"
    assert widgets["items"][0]["kind"] == "Widget"
    assert widgets["metadata"] == {"resourceVersion": "2"}


async def test_paged_lists_come_from_one_snapshot() -> None:
    api = make_api()
    for name in "abcde":
        api.add(CONFIGMAPS, cm(name))
    first = await api.list(CONFIGMAPS, limit=2)
    assert names(first) == ["a", "b"]
    assert first["metadata"]["resourceVersion"] == "5"
    assert first["metadata"]["remainingItemCount"] == 3
    token = first["metadata"]["continue"]
    assert loads(base64.b64decode(token)) == {"v": "meta.k8s.io/v1", "rv": 5,
                                              "start": "ns/b\x00"}
    api.remove(CONFIGMAPS, "c", namespace="ns")
    api.add(CONFIGMAPS, cm("bb"))
    api.modify(CONFIGMAPS, "d", lambda o: o.update(data={"late": "yes"}), namespace="ns")
    second = await api.list(CONFIGMAPS, limit=2, continue_=token)
    assert names(second) == ["c", "d"]
    assert second["items"][1]["data"] == {}
    assert second["metadata"]["resourceVersion"] == "5"
    third = await api.list(CONFIGMAPS, limit=2, continue_=second["metadata"]["continue"])
    assert names(third) == ["e"]
    assert "continue" not in third["metadata"]
    selected = await api.list(CONFIGMAPS, limit=1, field_selector="metadata.name!=a")
    assert "remainingItemCount" not in selected["metadata"]  # filtered: count unknown
    err = await raises(api.list(CONFIGMAPS, limit=2, continue_=token, resource_version="3"))
    assert (err.status, err.message) == (400, "specifying resource version is not allowed"
                                              " when using continue")
    err = await raises(api.list(CONFIGMAPS, continue_="not-a-token"))
    assert err.status == 400
    assert err.message.startswith("invalid continue token")


async def test_an_expired_continue_token_is_410_with_a_fresh_token() -> None:
    api = make_api()
    for name in "abc":
        api.add(CONFIGMAPS, cm(name))
    first = await api.list(CONFIGMAPS, limit=1)
    api.add(CONFIGMAPS, cm("d"))
    api.compact()
    err = await raises(api.list(CONFIGMAPS, limit=1, continue_=first["metadata"]["continue"]))
    assert err.is_gone()
    assert (err.status, err.reason) == (410, "Expired")
    assert err.message.startswith("The provided continue parameter is too old to display a"
                                  " consistent list result. You can start a new list without"
                                  " the continue parameter, or use the continue token")
    assert err.body is not None
    fresh = err.body["metadata"]["continue"]
    assert loads(base64.b64decode(fresh)) == {"v": "meta.k8s.io/v1", "rv": -1,
                                              "start": "ns/a\x00"}
    rest_of_it = await api.list(CONFIGMAPS, continue_=fresh)
    assert names(rest_of_it) == ["b", "c", "d"]  # the latest state
    assert rest_of_it["metadata"]["resourceVersion"] == "4"


async def test_list_resource_version_semantics() -> None:
    api = make_api()
    api.add(CONFIGMAPS, cm("a"))
    api.add(CONFIGMAPS, cm("b"))
    api.remove(CONFIGMAPS, "a", namespace="ns")  # rv 3
    for rv, match in (("0", None), ("", None), ("1", None), ("1", "NotOlderThan")):
        page = await api.list(CONFIGMAPS, resource_version=rv, resource_version_match=match)
        assert (names(page), page["metadata"]["resourceVersion"]) == (["b"], "3"), (rv, match)
    exact = await api.list(CONFIGMAPS, resource_version="1", resource_version_match="Exact")
    assert (names(exact), exact["metadata"]["resourceVersion"]) == (["a"], "1")
    legacy_exact = await api.list(CONFIGMAPS, resource_version="2", limit=10)
    assert names(legacy_exact) == ["a", "b"]
    err = await raises(api.list(CONFIGMAPS, resource_version="9"))
    assert (err.status, err.reason, err.message) == (
        504, "Timeout", "Timeout: Too large resource version: 9, current: 3")
    api.compact()
    err = await raises(api.list(CONFIGMAPS, resource_version="2",
                                resource_version_match="Exact"))
    assert err.is_gone()
    assert err.message == "The resourceVersion for the provided list is too old."
    err = await raises(api.list(CONFIGMAPS, resource_version_match="Exact"))
    assert (err.status, err.message) == (
        422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden:'
             " resourceVersionMatch is forbidden unless resourceVersion is provided")
    err = await raises(api.list(CONFIGMAPS, resource_version="0",
                                resource_version_match="Exact"))
    assert err.message == ('ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch:'
                           ' Forbidden: resourceVersionMatch "exact" is forbidden for'
                           ' resourceVersion "0"')


class SlimMeta(TypedDict, total=False):
    name: str
    namespace: str
    resourceVersion: str


class SlimPod(TypedDict, total=False):
    metadata: SlimMeta


async def test_codecs_decode_lists_and_events_as_on_the_wire() -> None:
    api = make_api()
    api.add(PODS, pod("a", app="web"))
    codec = Codec(SlimPod)
    page = await api.list(PODS, codec=codec)
    assert page["items"] == [{"metadata": {"name": "a", "namespace": "ns",
                                           "resourceVersion": "1"}}]
    watch = api.watch(PODS, resource_version="1", codec=codec)
    api.modify(PODS, "a", lambda p: p["metadata"]["labels"].update(x="y"), namespace="ns")
    assert await next_event(watch) == {"type": "MODIFIED", "object": {"metadata": {
        "name": "a", "namespace": "ns", "resourceVersion": "2"}}}
    api.bookmark()
    assert await next_event(watch) == {"type": "BOOKMARK", "object": {
        "kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "2"}}}
    await watch.aclose()


# -- watch -----------------------------------------------------------------------------------------


async def test_watch_from_a_resource_version_replays_the_history() -> None:
    api = make_api()
    api.add(CONFIGMAPS, cm("a"))
    api.add(CONFIGMAPS, cm("b"))
    api.modify(CONFIGMAPS, "a", lambda o: o.update(data={"x": "1"}), namespace="ns")
    api.remove(CONFIGMAPS, "b", namespace="ns")
    watch = api.watch(CONFIGMAPS, namespace="ns", resource_version="1")
    first = await next_event(watch)
    assert first["type"] == "ADDED"
    assert first["object"]["metadata"]["name"] == "b"
    assert first["object"]["kind"] == "ConfigMap"
    api.add(CONFIGMAPS, cm("c"))
    api.add(CONFIGMAPS, cm("elsewhere", ns="other"))
    assert await rest(watch) == [("MODIFIED", "a", "3"), ("DELETED", "b", "4"),
                                 ("ADDED", "c", "5")]


async def test_watch_without_a_resource_version_starts_with_the_state() -> None:
    api = make_api()
    api.add(CONFIGMAPS, cm("b"))
    api.add(CONFIGMAPS, cm("a"))
    for rv in ("", "0"):
        watch = api.watch(CONFIGMAPS, resource_version=rv)
        assert (await next_event(watch))["object"]["metadata"]["name"] == "a"
        assert await rest(watch) == [("ADDED", "b", "1")]
    quiet = api.watch(CONFIGMAPS, resource_version="", send_initial_events=False,
                      resource_version_match="NotOlderThan")
    opening = asyncio.ensure_future(next_event(quiet))
    await settle()
    api.add(CONFIGMAPS, cm("c"))
    assert (await opening)["object"]["metadata"]["name"] == "c"
    await quiet.aclose()


async def test_streaming_list_ends_with_the_initial_events_bookmark() -> None:
    api = make_api()
    api.add(CONFIGMAPS, cm("a"))
    api.add(CONFIGMAPS, cm("b"))
    api.add(SERVICES, {"metadata": {"name": "s", "namespace": "ns"}})
    watch = api.watch(CONFIGMAPS, resource_version="", send_initial_events=True,
                      resource_version_match="NotOlderThan", allow_watch_bookmarks=True)
    assert (await next_event(watch))["type"] == "ADDED"
    assert (await next_event(watch))["object"]["metadata"]["name"] == "b"
    assert await next_event(watch) == {"type": "BOOKMARK", "object": {
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"resourceVersion": "3", "annotations": {INITIAL_EVENTS_END: "true"}}}}
    api.add(CONFIGMAPS, cm("c"))
    assert await rest(watch) == [("ADDED", "c", "4")]

    err = await raises(anext(api.watch(CONFIGMAPS, send_initial_events=True)))
    assert (err.status, err.message) == (
        422, 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden:'
             " sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
    old_server = make_api(watch_list=False)
    err = await raises(anext(old_server.watch(CONFIGMAPS, send_initial_events=True,
                                              resource_version_match="NotOlderThan")))
    assert err.message.endswith("sendInitialEvents: Forbidden: sendInitialEvents is forbidden"
                                " for watch unless the WatchList feature gate is enabled")


async def test_watch_selectors_turn_leaving_objects_into_deletions() -> None:
    api = make_api()
    api.add(PODS, pod("a", app="web"))
    watch = api.watch(PODS, label_selector="app=web", resource_version="1")
    api.modify(PODS, "a", lambda p: p["metadata"]["labels"].update(app="db"), namespace="ns")
    left = await next_event(watch)
    assert left["type"] == "DELETED"
    assert left["object"]["metadata"]["labels"] == {"app": "web"}  # the previous content
    assert left["object"]["metadata"]["resourceVersion"] == "2"  # at the change's RV
    api.modify(PODS, "a", lambda p: p["metadata"]["labels"].update(x="1"), namespace="ns")
    api.modify(PODS, "a", lambda p: p["metadata"]["labels"].update(app="web"), namespace="ns")
    api.add(PODS, pod("b", app="db"))
    await api.delete(PODS, "a", namespace="ns")
    assert await rest(watch) == [("ADDED", "a", "4"), ("DELETED", "a", "6")]
    by_name = api.watch(PODS, field_selector="metadata.name=b", resource_version="1")
    assert await rest(by_name) == [("ADDED", "b", "5")]


async def test_watch_from_a_compacted_version_is_an_expired_error_event() -> None:
    api = make_api(history_limit=1)
    for name in "abc":
        api.add(CONFIGMAPS, cm(name))
    watch = api.watch(CONFIGMAPS, resource_version="0")
    assert len(await rest(watch)) == 3
    event = await next_event(api.watch(CONFIGMAPS, resource_version="1"))  # trimmed history
    assert event == {"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1 (2)", "reason": "Expired", "code": 410}}
    recent = api.watch(CONFIGMAPS, resource_version="2")
    assert await rest(recent) == [("ADDED", "c", "3")]
    api.compact()
    expired = await next_event(api.watch(CONFIGMAPS, resource_version="2"))
    assert ApiError.from_status(expired["object"]).is_gone()
    assert expired["object"]["message"] == "too old resource version: 2 (3)"
    assert api.watches() == []


async def test_watch_controls_and_timeout() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    api.add(CONFIGMAPS, cm("a"))
    timed = api.watch(CONFIGMAPS, resource_version="1", timeout_seconds=130)
    pending = asyncio.ensure_future(anext(timed))
    await settle()
    assert api.watches(CONFIGMAPS) == [timed]
    assert timed.opened
    api.add(CONFIGMAPS, cm("b"))
    assert (await pending)["type"] == "ADDED"
    pending = asyncio.ensure_future(anext(timed))
    clock.advance(59.9)
    await settle()
    assert not pending.done()
    clock.advance(0.1)  # the server's heartbeat: a bookmark every minute...
    assert (await pending)["object"]["metadata"] == {"resourceVersion": "2"}
    clock.advance(60.0)
    assert (await next_event(timed))["type"] == "BOOKMARK"
    clock.advance(8.0)  # ... and one 2 s before the timeout (at 128 s)
    assert (await next_event(timed))["type"] == "BOOKMARK"
    pending = asyncio.ensure_future(anext(timed))
    clock.advance(2.0)
    with pytest.raises(StopAsyncIteration):
        await pending
    assert api.watches() == []
    quiet = api.watch(CONFIGMAPS, resource_version="2", allow_watch_bookmarks=False)
    await quiet.open()
    clock.advance(600.0)
    assert await rest(quiet) == []

    broken = api.watch(CONFIGMAPS, resource_version="2")
    pending = asyncio.ensure_future(anext(broken))
    await settle()
    assert api.fail_watches() == 1
    err = await raises(pending)
    assert (err.status, err.reason) == (0, "ConnectionError")
    assert err.is_retriable()

    erroring = api.watch(CONFIGMAPS, resource_version="2")
    pending = asyncio.ensure_future(anext(erroring))
    await settle()
    erroring.send_error(too_many_requests())
    assert (await pending)["object"]["code"] == 429
    with pytest.raises(StopAsyncIteration):
        await anext(erroring)

    closing = api.watch(CONFIGMAPS, resource_version="2")
    pending = asyncio.ensure_future(anext(closing))
    await settle()
    await closing.aclose()  # from another task, while a read waits
    with pytest.raises(StopAsyncIteration):
        await pending
    async with api.watch(CONFIGMAPS, resource_version="2") as scoped:
        api.add(CONFIGMAPS, cm("c"))
        assert (await next_event(scoped))["object"]["metadata"]["name"] == "c"
    assert scoped.closed
    assert api.watches() == []


# -- faults and the request log --------------------------------------------------------------------


async def test_fault_rules_and_the_request_log() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    api.fail(conflict(CONFIGMAPS, "a"), verb="update", resource=CONFIGMAPS)
    api.delay(5.0, verb="get")
    created = await api.create(CONFIGMAPS, cm("a"))
    err = await raises(api.update(CONFIGMAPS, created))
    assert err.is_conflict()
    await api.update(CONFIGMAPS, created)  # the rule was for one request
    slow = asyncio.ensure_future(api.get(CONFIGMAPS, "a", namespace="ns"))
    await settle()
    assert not slow.done()
    clock.advance(5.0)
    assert (await slow)["metadata"]["name"] == "a"
    await api.list(CONFIGMAPS, namespace="ns", limit=10)
    await api.delete(CONFIGMAPS, "a", namespace="ns")
    assert [r.describe() for r in api.requests] == [
        ("create", "configmaps", "ns", "a"), ("update", "configmaps", "ns", "a"),
        ("update", "configmaps", "ns", "a"), ("get", "configmaps", "ns", "a"),
        ("list", "configmaps", "ns", ""), ("delete", "configmaps", "ns", "a")]
    assert [r.verb for r in api.writes()] == ["create", "update", "update", "delete"]
    assert api.requests[4].params == {"limit": 10}
    assert api.requests[0].body == {"metadata": {"name": "a", "namespace": "ns"}, "data": {}}


async def test_the_interceptor_sees_every_request() -> None:
    api = make_api()
    seen: list[Request] = []

    async def hook(req: Request) -> None:
        seen.append(req)
        if req.verb == "update" and req.subresource == "status":
            raise connection_error("boom")

    api.interceptor = hook
    await api.create(WIDGETS, widget("w"))
    err = await raises(api.update_status(WIDGETS, widget("w")))
    assert err.message == "boom"
    watch = api.watch(WIDGETS, resource_version="0")
    await next_event(watch)
    assert [(r.verb, r.subresource) for r in seen] == [
        ("create", ""), ("update", "status"), ("watch", "")]
    assert seen[-1].params == {"resource_version": "0", "allow_watch_bookmarks": True}
    api.interceptor = lambda req: (_ for _ in ()).throw(too_many_requests())
    err = await raises(api.get(WIDGETS, "w", namespace="ns"))
    assert err.is_too_many_requests()
    api.clear_faults()
    assert (await api.get(WIDGETS, "w", namespace="ns"))["metadata"]["name"] == "w"
    await api.close()
    err = await raises(api.get(WIDGETS, "w", namespace="ns"))
    assert err.status == 0


# -- the real runtime on the fake ------------------------------------------------------------------


def informer_on(api: FakeApi, clock: ManualClock, **options: Any) -> tuple[
        SharedIndexInformer, list[tuple[str, str]]]:
    informer = SharedIndexInformer(ResourceListerWatcher(api, PODS, namespace="ns"),
                                   clock=clock, rng=FixedRandom(), resource=PODS, **options)
    seen: list[tuple[str, str]] = []
    informer.add_event_handler(
        on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
        on_update=lambda old, new: seen.append(("update", new["metadata"]["name"])),
        on_delete=lambda o: seen.append(("delete", getattr(o, "key", None) or
                                         o["metadata"]["name"])),  # type: ignore[index]
    )
    return informer, seen


async def test_an_informer_streams_follows_and_relists_after_compaction() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    api.add(PODS, pod("a"))
    api.add(PODS, pod("x", ns="other"))
    informer, seen = informer_on(api, clock, watch_list=True)
    async with Running(informer):
        assert informer.has_synced()
        assert seen == [("add", "a")]
        assert informer.last_sync_resource_version == "2"
        await api.create(PODS, pod("b"))
        await api.patch(PODS, "a", {"metadata": {"labels": {"k": "v"}}}, namespace="ns")
        await settle()
        assert seen[1:] == [("add", "b"), ("update", "a")]
        cached = informer.indexer.get_by_key("ns/a")
        assert cached is not None
        assert cached["metadata"]["labels"] == {"k": "v"}

        api.end_watches(PODS)  # the server closes the watch; meanwhile history is compacted
        api.add(PODS, pod("c"))
        api.remove(PODS, "b", namespace="ns")
        api.compact()
        await settle()
        assert api.watches() == []  # the re-watch got 410 and the reflector backs off
        clock.advance(2.0)
        await settle()
        assert sorted(informer.indexer.list_keys()) == ["ns/a", "ns/c"]
        assert seen[3:] == [("update", "a"), ("add", "c"), ("delete", "ns/b")]
        watches = [r.params for r in api.requests if r.verb == "watch"]
        assert [(w.get("resource_version"), w.get("send_initial_events")) for w in watches] == [
            ("", True), ("4", None), ("4", True)]
        assert [r for r in api.requests if r.verb == "list"] == []


async def test_an_informer_lists_in_pages_and_survives_an_expired_token() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    for name in "abcde":
        api.add(PODS, pod(name))

    def compact_during_paging(req: Request) -> None:
        if req.verb == "list" and "continue_" in req.params:
            api.add(PODS, pod("f"))
            api.compact()

    api.interceptor = compact_during_paging
    informer, seen = informer_on(api, clock, watch_list=False, page_size=2)
    async with Running(informer):
        assert informer.has_synced()
        assert sorted(informer.indexer.list_keys()) == [f"ns/{n}" for n in "abcdef"]
        lists = [r.params for r in api.requests if r.verb == "list"]
        assert lists[0] == {"limit": 2, "resource_version": "0"}
        assert set(lists[1]) == {"limit", "continue_"}
        assert lists[2] == {"resource_version": "0"}  # the full list after the 410
        api.interceptor = None
        await api.delete(PODS, "f", namespace="ns")
        await settle()
        assert seen[-1] == ("delete", "f")
        synced_rv = informer.last_sync_resource_version

        api.end_watches(PODS)  # the re-watch and then the exact (paged) relist get 410
        api.add(PODS, pod("g"))
        api.compact()
        await settle()
        clock.advance(2.0)
        await settle()
        assert sorted(informer.indexer.list_keys()) == [f"ns/{n}" for n in "abcdeg"]
        relists = [r.params for r in api.requests if r.verb == "list"][3:]
        assert relists[:2] == [{"limit": 2, "resource_version": synced_rv},
                               {"limit": 2, "resource_version": ""}]
        assert [set(p) for p in relists[2:]] == [{"limit", "continue_"}] * 2


async def test_the_event_recorder_writes_and_aggregates_events() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    involved = api.add(PODS, pod("p"))
    recorder = EventRecorder(api, "mpi-job-controller", clock=clock)
    async with Running(recorder):
        recorder.event(involved, "Normal", "Created", "created pod p")
        recorder.event(involved, "Normal", "Created", "created pod p")
        recorder.event(involved, "Warning", "Failed", "it broke")
        await recorder.flush()
        recorder.event(involved, "Warning", "Failed", "it broke")
        await recorder.flush()
    events = api.objects(EVENTS, "ns")
    assert [(e["reason"], e["type"], e["message"], e["count"]) for e in events] == [
        ("Created", "Normal", "created pod p", 2), ("Failed", "Warning", "it broke", 2)]
    assert events[0]["involvedObject"]["uid"] == involved["metadata"]["uid"]
    # The two identical events queued together are one create of count 2; the repeat of one
    # already written is a patch.
    assert [r.describe()[:2] for r in api.writes()] == [
        ("create", "events"), ("create", "events"), ("patch", "events")]


async def test_leader_election_acquires_and_hands_over_a_lease() -> None:
    clock = ManualClock()
    api = FakeApi(clock=clock)
    led: list[str] = []

    def elector(identity: str) -> LeaderElector:
        return LeaderElector(LeaseLock(api, "ns", "lock", identity), clock=clock,
                             rng=FixedRandom())

    async def lead_as(name: str) -> None:
        led.append(name)
        await asyncio.Event().wait()

    first, second = elector("a"), elector("b")
    task_a = asyncio.create_task(first.run(lambda: lead_as("a")))
    await settle()
    task_b = asyncio.create_task(second.run(lambda: lead_as("b")))
    await settle()
    lease = api.stored(LEASES, "lock", namespace="ns")
    assert lease is not None
    assert led == ["a"]
    assert first.is_leader()
    assert lease["spec"]["holderIdentity"] == "a"
    assert lease["spec"]["leaseTransitions"] == 0
    assert lease["spec"]["leaseDurationSeconds"] == 15
    assert second.get_leader() == "a"
    assert not second.is_leader()
    task_a.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task_a
    released = api.stored(LEASES, "lock", namespace="ns")
    assert released is not None
    assert released["spec"]["holderIdentity"] == ""
    for _ in range(3):
        clock.advance(2.0)
        await settle()
    taken = api.stored(LEASES, "lock", namespace="ns")
    assert taken is not None
    assert led == ["a", "b"]
    assert second.is_leader()
    assert taken["spec"]["holderIdentity"] == "b"
    assert taken["spec"]["leaseTransitions"] == 1
    task_b.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task_b
