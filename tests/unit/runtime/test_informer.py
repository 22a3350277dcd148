"""SharedIndexInformer and InformerFactory: dispatch order, has_synced, transform, resync.

client-go ``shared_informer.go``: handlers see an object only after the indexer holds it;
``HasSynced`` once the first Replace has been popped and delivered; resync re-delivers every
cached object as ``OnUpdate(obj, obj)``; a handler added late gets the cache replayed as adds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mpi_controller.kube.resources import PODS
from mpi_controller.runtime.cache import (
    CONTROLLER_UID_INDEX,
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    controller_uid_index,
)
from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.compact import compact_object
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.informer import (
    InformerFactory,
    SharedIndexInformer,
    drop_managed_fields,
)
from mpi_controller.runtime.rest import RestClient
from tests.unit.runtime.fakes import FakeListerWatcher, FixedRandom, Running, page, pod, settle

Obj = dict[str, Any]


def with_managed_fields(o: Obj) -> Obj:
    o["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    return o


def make(lw: FakeListerWatcher, **kw: Any) -> SharedIndexInformer:
    kw.setdefault("clock", ManualClock())
    return SharedIndexInformer(lw, rng=FixedRandom(), resource=PODS, **kw)  # type: ignore[arg-type]


async def test_handlers_run_after_the_indexer_has_the_change() -> None:
    lw = FakeListerWatcher(page([pod("a", "1")], "2"))
    informer = make(lw)
    seen: list[tuple[str, bool]] = []
    lister = informer.lister().namespaced("ns")

    def cached(name: str) -> bool:
        try:
            lister.get(name)
            return True
        except ApiError:
            return False

    informer.add_event_handler(
        on_add=lambda o: seen.append(("add", cached(o["metadata"]["name"]))),
        on_update=lambda old, new: seen.append(("update", cached(new["metadata"]["name"]))),
        on_delete=lambda o: seen.append(("delete", cached(o["metadata"]["name"]))),  # type: ignore[index]
    )
    async with Running(informer):
        w = lw.watches[-1]
        w.send("ADDED", pod("b", "3"))
        w.send("MODIFIED", pod("b", "4"))
        w.send("DELETED", pod("b", "5"))
        await settle()
    assert seen == [("add", True), ("add", True), ("update", True), ("delete", False)]


async def test_has_synced_only_after_the_initial_list_is_dispatched() -> None:
    lw = FakeListerWatcher()
    informer = make(lw)
    synced_during_add: list[bool] = []
    informer.add_event_handler(on_add=lambda o: synced_during_add.append(informer.has_synced()))
    told: list[tuple[bool, int]] = []  # what a synced listener sees when it is called
    informer.add_synced_listener(lambda: told.append((informer.has_synced(),
                                                      len(informer.indexer.list()))))
    async with Running(informer):
        assert not informer.has_synced()  # the list is still in flight
        lw.script(page([pod("a", "1"), pod("b", "2")], "3"))
        await settle()
        assert informer.has_synced()
    assert synced_during_add == [False, False]
    assert told == [(True, 2)]


async def test_transform_is_applied_before_caching_and_dispatch() -> None:
    lw = FakeListerWatcher(page([with_managed_fields(pod("a", "1"))], "2"))
    informer = make(lw, transform=drop_managed_fields)
    added: list[Obj] = []
    informer.add_event_handler(on_add=added.append)
    async with Running(informer):
        lw.watches[-1].send("ADDED", with_managed_fields(pod("b", "3")))
        await settle()
    assert [("managedFields" in o["metadata"]) for o in added] == [False, False]
    assert all("managedFields" not in o["metadata"] for o in informer.indexer.list())


async def test_resync_redelivers_cached_objects_as_updates_with_the_same_object() -> None:
    clock = ManualClock()
    lw = FakeListerWatcher(page([pod("a", "1"), pod("b", "2")], "3"))
    informer = make(lw, clock=clock, resync_period=30.0)
    updates: list[tuple[str, bool]] = []
    informer.add_event_handler(
        on_update=lambda old, new: updates.append((new["metadata"]["name"], old is new)))
    async with Running(informer):
        clock.advance(29.9)
        await settle()
        assert updates == []
        clock.advance(0.1)
        await settle()
        assert sorted(updates) == [("a", True), ("b", True)]


async def test_late_handler_gets_existing_objects_as_adds() -> None:
    lw = FakeListerWatcher(page([pod("a", "1")], "2"))
    informer = make(lw)
    async with Running(informer):
        added: list[str] = []
        informer.add_event_handler(on_add=lambda o: added.append(o["metadata"]["name"]))
        assert added == ["a"]


async def test_a_failing_handler_does_not_stop_the_others() -> None:
    lw = FakeListerWatcher(page([pod("a", "1")], "2"))
    informer = make(lw)
    got: list[str] = []

    def boom(o: Obj) -> None:
        raise RuntimeError("handler bug")

    informer.add_event_handler(on_add=boom)
    informer.add_event_handler(on_add=lambda o: got.append(o["metadata"]["name"]))
    async with Running(informer):
        lw.watches[-1].send("ADDED", pod("b", "3"))
        await settle()
    assert got == ["a", "b"]


async def test_delete_handler_receives_tombstones_on_relist() -> None:
    lw = FakeListerWatcher(page([pod("a", "1")], "2"), page([], "9"))
    clock = ManualClock()
    informer = make(lw, clock=clock)
    deleted: list[Any] = []
    informer.add_event_handler(on_delete=deleted.append)
    async with Running(informer):
        lw.watches[-1].fail(ApiError(410, "Expired"))
        await settle()
        clock.advance(0.8)
        await settle()
    assert deleted == [DeletedFinalStateUnknown("ns/a", pod("a", "1"))]


async def test_factory_shares_informers_and_merges_indexers() -> None:
    factory = InformerFactory(RestClient(object()), clock=ManualClock())
    a = factory.informer_for(PODS, "ns")
    b = factory.informer_for(PODS, "ns", indexers={CONTROLLER_UID_INDEX: controller_uid_index})
    c = factory.informer_for(PODS, "ns", label_selector="app=x")
    assert a is b
    assert a is not c
    assert a.indexer.has_index(NAMESPACE_INDEX)
    assert a.indexer.has_index(CONTROLLER_UID_INDEX)
    assert a.reflector.transform is compact_object
    assert factory.informers == [a, c]


async def test_factory_wait_for_cache_sync_times_out_on_the_clock() -> None:
    clock = ManualClock()
    factory = InformerFactory(RestClient(object()), clock=clock)
    informer = factory.informer_for(PODS)
    waiter = asyncio.create_task(factory.wait_for_cache_sync(timeout=1.0))
    await settle()
    for _ in range(9):
        clock.advance(0.1)
        await settle()
    assert not waiter.done()
    clock.advance(0.11)
    await settle()
    assert waiter.done()
    assert waiter.result() is False
    informer.reflector.synced = True
    assert await factory.wait_for_cache_sync(timeout=1.0) is True
