"""Reflector streaming list (client-go's WatchList, KEP-3157), on a manual clock: the initial
state comes as ADDED events on a watch with sendInitialEvents, ended by a bookmark annotated
k8s.io/initial-events-end; the same stream then goes on as the watch. Servers that reject it
are listed instead."""

from __future__ import annotations

from typing import Any

from mpi_controller.runtime.errors import ApiError
from tests.unit.runtime.fakes import (
    FakeListerWatcher,
    FakeWatch,
    ReflectorHarness,
    page,
    pod,
    settle,
)

Obj = dict[str, Any]


def end_bookmark(rv: str) -> Obj:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {
        "resourceVersion": rv, "annotations": {"k8s.io/initial-events-end": "true"}}}


def streaming(rv: str, rnd_timeout: int = 300) -> dict[str, Any]:
    return {"resource_version": rv, "resource_version_match": "NotOlderThan",
            "send_initial_events": True, "allow_watch_bookmarks": True,
            "timeout_seconds": rnd_timeout}


def streaming_reflector(lw: FakeListerWatcher, transform: Any = None) -> ReflectorHarness:
    """A reflector harness with the streaming list on."""
    return ReflectorHarness(lw, watch_list=True, transform=transform)


async def initial(h: ReflectorHarness, *objs: Obj, rv: str) -> FakeWatch:
    w = h.watch()
    for obj in objs:
        w.send("ADDED", obj)
    w.send("BOOKMARK", end_bookmark(rv))
    await settle()
    return w


async def test_initial_events_sync_the_cache_then_the_stream_goes_on_as_the_watch() -> None:
    lw = FakeListerWatcher()
    async with streaming_reflector(lw) as h:
        assert lw.watch_params == [streaming("")]
        w = h.watch()
        w.send("ADDED", pod("a", "5"))
        w.send("ADDED", pod("b", "6"))
        await settle()
        assert not h.reflector.synced
        assert h.keys() == []  # nothing is applied before the bookmark
        w.send("BOOKMARK", end_bookmark("10"))
        await settle()
        assert h.reflector.synced
        assert h.keys() == ["ns/a", "ns/b"]
        assert h.sink.calls == [("add", "a", "5"), ("add", "b", "6")]
        assert h.reflector.last_sync_resource_version == "10"
        w.send("MODIFIED", pod("a", "11"))
        await settle()
        assert h.sink.calls[-1] == ("update", "a", "5", "11")
        assert len(lw.watches) == 1
        assert lw.list_calls == []
        w.close()  # a normal close: a plain watch from the last RV
        await settle()
        assert lw.watch_params[-1] == {"resource_version": "11", "timeout_seconds": 300,
                                       "allow_watch_bookmarks": True}
        assert w.closed


async def test_the_relist_after_a_410_streams_again_with_tombstones() -> None:
    lw = FakeListerWatcher()
    async with streaming_reflector(lw) as h:
        w = await initial(h, pod("a", "5"), pod("b", "6"), rv="10")
        w.send("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"})
        await settle()
        h.clock.advance(0.8)  # the reflector's backoff
        await settle()
        assert lw.watch_params[-1] == streaming("10")
        w2 = await initial(h, pod("a", "20"), rv="30")
        assert h.keys() == ["ns/a"]
        assert h.sink.calls[2:] == [("update", "a", "5", "20"), ("tombstone", "ns/b")]
        assert h.reflector.last_sync_resource_version == "30"
        assert not w2.closed


async def test_an_expired_rv_streams_at_once_from_the_latest_state() -> None:
    lw = FakeListerWatcher()
    async with streaming_reflector(lw) as h:
        w = await initial(h, pod("a", "5"), rv="10")
        w.fail(ApiError(410, "Expired", "too old"))
        await settle()
        h.clock.advance(0.8)
        await settle()
        h.watch().fail(ApiError(410, "Expired", "too old resource version: 10"))
        await settle()
        assert [p["resource_version"] for p in lw.watch_params] == ["", "10", ""]
        assert h.clock.now() == 0.8  # no second backoff
        await initial(h, rv="40")
        assert h.sink.calls[-1] == ("tombstone", "ns/a")


async def test_a_server_without_streaming_lists_is_listed_instead() -> None:
    lw = FakeListerWatcher(page([pod("a", "5")], "9"))
    async with streaming_reflector(lw) as h:
        h.watch().fail(ApiError(422, "Invalid", "sendInitialEvents is forbidden for watch"))
        await settle()
        assert lw.list_calls == [{"resource_version": "0", "limit": 500}]
        assert h.keys() == ["ns/a"]
        assert lw.watch_params[-1] == {"resource_version": "9", "timeout_seconds": 300,
                                       "allow_watch_bookmarks": True}
        assert not h.reflector.watch_list


async def test_a_stream_that_ends_before_the_bookmark_backs_off_and_streams_again() -> None:
    lw = FakeListerWatcher()
    async with streaming_reflector(lw) as h:
        w = h.watch()
        w.send("ADDED", pod("a", "5"))
        w.close()
        await settle()
        assert len(lw.watches) == 1
        assert w.closed
        h.clock.advance(0.8)
        await settle()
        assert lw.watch_params[-1] == streaming("")
        assert h.keys() == []
        await initial(h, pod("b", "6"), rv="7")
        assert h.keys() == ["ns/b"]


async def test_objects_pass_the_transform_and_deletions_before_the_end_count() -> None:
    lw = FakeListerWatcher()
    async with streaming_reflector(lw, transform=lambda o: {**o, "slim": True}) as h:
        w = h.watch()
        w.send("ADDED", pod("a", "5"))
        w.send("ADDED", pod("b", "6"))
        w.send("DELETED", pod("a", "7"))
        w.send("BOOKMARK", end_bookmark("8"))
        await settle()
        assert h.keys() == ["ns/b"]
        assert h.indexer.get_by_key("ns/b")["slim"] is True  # type: ignore[index]
