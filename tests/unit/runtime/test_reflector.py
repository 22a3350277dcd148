"""Reflector: client-go ``tools/cache/reflector.go`` list/watch/relist rules, on a manual clock.

Each test drives a scripted ListerWatcher and asserts the exact requests, the cache content,
the sink calls and the delays.
"""

from __future__ import annotations

import pytest

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.reflector import Backoff
from tests.unit.runtime.fakes import (
    FakeListerWatcher,
    FixedRandom,
    page,
    pod,
    settle,
)
from tests.unit.runtime.fakes import (
    ReflectorHarness as Harness,
)

GONE = ApiError(410, "Expired", "too old resource version: 1 (5)")


@pytest.fixture
def two_pages() -> FakeListerWatcher:
    return FakeListerWatcher(
        page([pod("a", "5"), pod("b", "6")], "10", cont="tok"),
        page([pod("c", "7")], "10"),
    )


async def test_first_list_is_paged_from_rv_0_then_watch_from_list_rv(
    two_pages: FakeListerWatcher,
) -> None:
    """reflector.go: relistResourceVersion() is "0" first; pager limit 500 with continue
    (RV cleared on continued pages); watch from the list RV with bookmarks and a timeout
    in [5 min, 10 min]."""
    async with Harness(two_pages, rnd=0.5) as h:
        assert two_pages.list_calls == [
            {"resource_version": "0", "limit": 500},
            {"limit": 500, "continue_": "tok"},
        ]
        assert h.keys() == ["ns/a", "ns/b", "ns/c"]
        assert h.sink.calls == [("add", "a", "5"), ("add", "b", "6"), ("add", "c", "7")]
        assert h.reflector.synced
        assert two_pages.watch_params == [
            {"resource_version": "10", "timeout_seconds": 450, "allow_watch_bookmarks": True}
        ]


async def test_timeout_seconds_spans_five_to_ten_minutes() -> None:
    """defaultMinWatchTimeout 5 min, timeoutSeconds = min * (rand + 1)."""
    for rnd, expected in ((0.0, 300), (0.999, 599)):
        lw = FakeListerWatcher(page([], "1"))
        async with Harness(lw, rnd=rnd):
            assert lw.watch_params[0]["timeout_seconds"] == expected


async def test_list_items_get_kind_and_api_version_from_the_list() -> None:
    bare = {"metadata": {"name": "x", "namespace": "ns", "resourceVersion": "1"}}
    lw = FakeListerWatcher(page([bare], "1"))
    async with Harness(lw) as h:
        assert h.indexer.get_by_key("ns/x") == {**bare, "kind": "Pod", "apiVersion": "v1"}


async def test_events_update_indexer_before_the_sink_in_order(
    two_pages: FakeListerWatcher,
) -> None:
    """processDeltas: the indexer is updated before handlers are notified; RealFIFO order."""
    async with Harness(two_pages) as h:
        w = two_pages.watches[-1]
        w.send("ADDED", pod("d", "11"))
        w.send("MODIFIED", pod("a", "12"))
        w.send("DELETED", pod("b", "13"))
        await settle()
        assert h.sink.calls[3:] == [("add", "d", "11"), ("update", "a", "5", "12"), ("delete", "b")]
        assert all(h.sink.seen_in_indexer)
        assert h.keys() == ["ns/a", "ns/c", "ns/d"]
        assert h.reflector.last_sync_resource_version == "13"


async def test_normal_close_rewatches_from_last_rv_without_relist(
    two_pages: FakeListerWatcher,
) -> None:
    """A watch that closes normally is re-opened from the last RV; no LIST."""
    async with Harness(two_pages) as h:
        w = two_pages.watches[-1]
        w.send("ADDED", pod("d", "11"))
        w.close()
        await settle()
        assert len(two_pages.list_calls) == 2
        assert [p["resource_version"] for p in two_pages.watch_params] == ["10", "11"]
        assert w.closed
        assert h.clock.now() == 0.0  # no backoff


async def test_bookmark_only_advances_the_resource_version(
    two_pages: FakeListerWatcher,
) -> None:
    async with Harness(two_pages) as h:
        w = two_pages.watches[-1]
        w.send("BOOKMARK", {"kind": "Pod", "apiVersion": "v1",
                            "metadata": {"resourceVersion": "99"}})
        w.close()
        await settle()
        assert h.sink.calls == [("add", "a", "5"), ("add", "b", "6"), ("add", "c", "7")]
        assert h.reflector.last_sync_resource_version == "99"
        assert two_pages.watch_params[-1]["resource_version"] == "99"
        assert len(two_pages.list_calls) == 2


async def test_gone_error_event_relists_after_backoff_with_tombstones(
    two_pages: FakeListerWatcher,
) -> None:
    """410 ERROR ⇒ ListAndWatch returns ⇒ backoff (0.8 s) ⇒ relist at the last RV; keys that
    vanished meanwhile reach on_delete as DeletedFinalStateUnknown (DeltaFIFO.Replace)."""
    async with Harness(two_pages) as h:
        w = two_pages.watches[-1]
        w.send("MODIFIED", pod("a", "11"))
        two_pages.script(page([pod("a", "20"), pod("e", "21")], "30"))
        w.send("ERROR", {"kind": "Status", "code": 410, "reason": "Expired",
                         "message": "too old resource version"})
        await settle()
        assert len(two_pages.list_calls) == 2  # still backing off
        await h.advance(0.79)
        assert len(two_pages.list_calls) == 2
        await h.advance(0.01)
        assert two_pages.list_calls[-1] == {"resource_version": "11", "limit": 500}  # was paged
        assert h.keys() == ["ns/a", "ns/e"]
        assert h.sink.calls[4:] == [
            ("update", "a", "11", "20"), ("add", "e", "21"),
            ("tombstone", "ns/b"), ("tombstone", "ns/c"),
        ]
        assert two_pages.watch_params[-1]["resource_version"] == "30"


async def test_http_410_on_watch_relists() -> None:
    lw = FakeListerWatcher(page([pod("a", "1")], "5"), page([], "8"))
    async with Harness(lw) as h:
        lw.watches[-1].fail(GONE)
        await h.advance(0.8)
        assert [c["resource_version"] for c in lw.list_calls] == ["0", "5"]
        assert h.sink.calls[-1] == ("tombstone", "ns/a")


async def test_relist_gone_retries_at_once_with_quorum_read() -> None:
    """list(): Expired on the relist ⇒ isLastSyncResourceVersionUnavailable ⇒ RV "" now."""
    lw = FakeListerWatcher(page([pod("a", "1")], "5"), GONE, page([pod("a", "9")], "9"))
    async with Harness(lw) as h:
        lw.watches[-1].fail(GONE)
        await h.advance(0.8)
        assert lw.list_calls == [
            {"resource_version": "0", "limit": 500},
            {"resource_version": "5"},
            {"resource_version": "", "limit": 500},
        ]
        assert lw.watch_params[-1]["resource_version"] == "9"
        assert h.clock.now() == 0.8


async def test_expired_continue_token_falls_back_to_a_full_list() -> None:
    """tools/pager FullListIfExpired: an expired continue ⇒ one unpaged list at the same RV."""
    lw = FakeListerWatcher(page([pod("a", "1")], "5", cont="tok"), GONE,
                           page([pod("a", "1"), pod("b", "2")], "6"))
    async with Harness(lw) as h:
        assert lw.list_calls == [
            {"resource_version": "0", "limit": 500},
            {"limit": 500, "continue_": "tok"},
            {"resource_version": "0"},
        ]
        assert h.keys() == ["ns/a", "ns/b"]


async def test_after_a_paged_list_relists_keep_paging() -> None:
    """paginatedResult: once a list was paged, later lists are paged too."""
    lw = FakeListerWatcher(page([pod("a", "1")], "5", cont="t"), page([], "5"), page([], "7"))
    async with Harness(lw) as h:
        lw.watches[-1].fail(GONE)
        await h.advance(0.8)
        assert lw.list_calls[-1] == {"resource_version": "5", "limit": 500}


async def test_connection_errors_back_off_exponentially_then_rewatch_without_relist() -> None:
    """Retriable watch errors (connection refused, 429) back off 0.8 s x2 up to 30 s and
    re-open the watch from the same RV; no relist."""
    lw = FakeListerWatcher(page([pod("a", "1")], "5"))
    async with Harness(lw) as h:
        for delay in [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]:
            n = len(lw.watches)
            lw.watches[-1].fail(ApiError(0, "ConnectionError", "refused"))
            await h.advance(delay - 0.001)
            assert len(lw.watches) == n
            await h.advance(0.002)
            assert len(lw.watches) == n + 1
        assert len(lw.list_calls) == 1
        assert {p["resource_version"] for p in lw.watch_params} == {"5"}


async def test_too_many_requests_backs_off_with_jitter() -> None:
    lw = FakeListerWatcher(page([], "5"))
    async with Harness(lw, rnd=0.5) as h:
        lw.watches[-1].fail(ApiError(429, "TooManyRequests"))
        await h.advance(1.19)
        assert len(lw.watches) == 1
        await h.advance(0.02)  # due at 0.8 + 0.5 * 1.0 * 0.8
        assert len(lw.watches) == 2
        assert len(lw.list_calls) == 1


async def test_transport_error_after_events_rewatches_at_once() -> None:
    """A broken stream after events ends the watch like a close: re-watch from the last RV."""
    lw = FakeListerWatcher(page([], "5"))
    async with Harness(lw) as h:
        w = lw.watches[-1]
        w.send("ADDED", pod("a", "6"))
        w.fail(ApiError(0, "ConnectionError", "payload not completed"))
        await settle()
        assert [p["resource_version"] for p in lw.watch_params] == ["5", "6"]
        assert h.clock.now() == 0


async def test_very_short_watch_backs_off_and_relists() -> None:
    """handleWatch: closed in < 1 s with no events ⇒ error ⇒ backoff ⇒ relist."""
    lw = FakeListerWatcher(page([], "5"), page([], "6"))
    async with Harness(lw) as h:
        lw.watches[-1].close()
        await h.advance(0.8)
        assert [c["resource_version"] for c in lw.list_calls] == ["0", "5"]


async def test_quiet_watch_that_closes_after_a_second_rewatches() -> None:
    lw = FakeListerWatcher(page([], "5"))
    async with Harness(lw) as h:
        await h.advance(1.0)
        lw.watches[-1].close()
        await settle()
        assert len(lw.watches) == 2
        assert len(lw.list_calls) == 1


async def test_inactivity_deadline_restarts_the_watch() -> None:
    """No event nor bookmark for inactivity_timeout ⇒ close the watch and re-open it."""
    lw = FakeListerWatcher(page([], "5"))
    async with Harness(lw, inactivity_timeout=60.0) as h:
        await h.advance(59.0)
        lw.watches[-1].send("ADDED", pod("a", "6"))
        await settle()
        await h.advance(59.0)
        assert len(lw.watches) == 1  # the event pushed the deadline to t=119
        await h.advance(1.0)
        assert lw.watches[0].closed
        assert [p["resource_version"] for p in lw.watch_params] == ["5", "6"]
        assert len(lw.list_calls) == 1


async def test_list_failure_backs_off_and_retries() -> None:
    lw = FakeListerWatcher(ApiError(500, "InternalError"), ApiError(403, "Forbidden"),
                           page([pod("a", "1")], "2"))
    async with Harness(lw) as h:
        assert not h.reflector.synced
        await h.advance(0.8)
        assert not h.reflector.synced
        await h.advance(1.6)
        assert h.reflector.synced
        assert [c["resource_version"] for c in lw.list_calls] == ["0", "0", "0"]


def test_backoff_resets_after_two_healthy_minutes() -> None:
    """ExponentialBackoffManager(800ms, 30s, 2min reset, x2, jitter 1.0)."""
    clock = ManualClock()
    b = Backoff(clock=clock, rng=FixedRandom(0.0))
    assert [b.delay() for _ in range(3)] == [0.8, 1.6, 3.2]
    clock.advance(3.2 + 119.0)
    assert b.delay() == 6.4
    clock.advance(6.4 + 120.0)
    assert b.delay() == 0.8


def test_backoff_jitter_adds_up_to_the_full_delay() -> None:
    b = Backoff(clock=ManualClock(), rng=FixedRandom(0.999))
    assert b.delay() == pytest.approx(0.8 * 1.999)


async def test_cancellation_closes_the_open_watch() -> None:
    lw = FakeListerWatcher(page([], "5"))
    async with Harness(lw):
        pass
    assert lw.watches[-1].closed
