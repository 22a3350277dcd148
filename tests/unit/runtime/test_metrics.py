"""Workqueue metrics (client-go ``metrics.go`` semantics) and the health/metrics HTTP server.

The registry is process-global, so every test uses its own queue name.
"""

from __future__ import annotations

import asyncio
import itertools

import aiohttp
import prometheus_client

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.metrics import REGISTRY, WORKQUEUE_BUCKETS, serve_http
from mpi_controller.runtime.workqueue import DelayingQueue, Queue, RateLimitingQueue


def value(metric: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(metric, labels)


def series_named(name: str) -> list[str]:
    return [
        sample.name
        for family in REGISTRY.collect()
        for sample in family.samples
        if sample.labels.get("name") == name
    ]


def test_buckets_are_exponential_10ns_to_1000s() -> None:
    assert len(WORKQUEUE_BUCKETS) == 12
    assert WORKQUEUE_BUCKETS[0] == 1e-08
    assert WORKQUEUE_BUCKETS[-1] == 1000.0
    ratios = {round(b / a, 9) for a, b in itertools.pairwise(WORKQUEUE_BUCKETS)}
    assert ratios == {10.0}


def test_no_created_series() -> None:
    created = [
        s.name for f in REGISTRY.collect() for s in f.samples if s.name.endswith("_created")
    ]
    assert created == []


async def test_depth_and_adds_ignore_duplicates() -> None:
    q: Queue[str] = Queue(name="m-dedupe", clock=ManualClock())
    for item in ["a", "a", "b", "a"]:
        q.add(item)
    assert value("workqueue_adds_total", name="m-dedupe") == 2
    assert value("workqueue_depth", name="m-dedupe") == 2
    await q.get()
    assert value("workqueue_depth", name="m-dedupe") == 1


async def test_add_during_processing_counts_once_and_requeue_on_done_does_not() -> None:
    q: Queue[str] = Queue(name="m-reprocess", clock=ManualClock())
    q.add("a")
    await q.get()
    q.add("a")
    q.add("a")
    assert value("workqueue_adds_total", name="m-reprocess") == 2
    assert value("workqueue_depth", name="m-reprocess") == 1
    q.done("a")
    assert value("workqueue_adds_total", name="m-reprocess") == 2
    await q.get()
    assert value("workqueue_depth", name="m-reprocess") == 0


async def test_queue_and_work_duration_use_the_queue_clock() -> None:
    clock = ManualClock()
    q: Queue[str] = Queue(name="m-durations", clock=clock)
    q.add("a")
    clock.advance(2)
    q.add("a")  # duplicate: the first add time counts
    await q.get()
    clock.advance(3)
    q.done("a")
    assert value("workqueue_queue_duration_seconds_count", name="m-durations") == 1
    assert value("workqueue_queue_duration_seconds_sum", name="m-durations") == 2.0
    assert value("workqueue_queue_duration_seconds_bucket", name="m-durations", le="1.0") == 0
    assert value("workqueue_queue_duration_seconds_bucket", name="m-durations", le="10.0") == 1
    assert value("workqueue_work_duration_seconds_count", name="m-durations") == 1
    assert value("workqueue_work_duration_seconds_sum", name="m-durations") == 3.0


async def test_unfinished_work_and_longest_processor_refresh_every_half_second() -> None:
    clock = ManualClock()
    q: Queue[str] = Queue(name="m-unfinished", clock=clock)
    q.add("a")
    q.add("b")
    await q.get()  # "a" in flight from t=0
    clock.advance(0.5)
    assert value("workqueue_unfinished_work_seconds", name="m-unfinished") == 0.5
    assert value("workqueue_longest_running_processor_seconds", name="m-unfinished") == 0.5
    await q.get()  # "b" in flight from t=0.5
    clock.advance(0.25)  # no refresh between ticks
    assert value("workqueue_unfinished_work_seconds", name="m-unfinished") == 0.5
    clock.advance(0.25)
    assert value("workqueue_unfinished_work_seconds", name="m-unfinished") == 1.5
    assert value("workqueue_longest_running_processor_seconds", name="m-unfinished") == 1.0
    q.done("a")
    q.done("b")
    clock.advance(0.5)
    assert value("workqueue_unfinished_work_seconds", name="m-unfinished") == 0
    assert value("workqueue_longest_running_processor_seconds", name="m-unfinished") == 0
    q.shut_down()
    assert clock.pending() == 0  # the refresh timer is cancelled


async def test_retries_count_every_add_after_including_zero_delay() -> None:
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(name="m-retries", clock=clock)
    q.add_after("a", 0)
    q.add_after("b", 1)
    q.add_after("b", 5)  # ignored for scheduling, still a retry
    q.add_rate_limited("c")
    assert value("workqueue_retries_total", name="m-retries") == 4
    q.shut_down()
    q.add_after("d", 0)
    q.add_rate_limited("d")
    assert value("workqueue_retries_total", name="m-retries") == 4


async def test_unnamed_queue_emits_nothing() -> None:
    before = sorted(str(s) for f in REGISTRY.collect() for s in f.samples)
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    q.add("a")
    q.add_after("b", 1)
    q.add_rate_limited("c")
    assert clock.pending() == 2  # "b" and "c" only: no metrics timer
    await q.get()
    clock.advance(1)
    q.done("a")
    after = sorted(str(s) for f in REGISTRY.collect() for s in f.samples)
    assert after == before
    assert series_named("") == []


async def test_named_queue_exposes_all_seven_series() -> None:
    q: DelayingQueue[str] = DelayingQueue(name="m-series", clock=ManualClock())
    q.add("a")
    families = {
        n.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count")
        for n in series_named("m-series")
    }
    assert families == {
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries_total",
    }


async def test_http_server_serves_metrics_and_checks() -> None:
    healthy = {"ok": True}
    checks = {"always": lambda: True, "toggle": lambda: healthy["ok"]}

    def broken() -> bool:
        raise RuntimeError("boom")

    q: Queue[str] = Queue(name="m-http", clock=ManualClock())
    q.add("a")
    server = await serve_http("127.0.0.1", 0, healthz=checks, readyz={"broken": broken})
    base = f"http://127.0.0.1:{server.port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/metrics") as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"] == prometheus_client.CONTENT_TYPE_LATEST
                assert 'workqueue_depth{name="m-http"} 1.0' in await resp.text()
            async with http.get(f"{base}/healthz") as resp:
                assert (resp.status, await resp.text()) == (200, "ok")
            healthy["ok"] = False
            async with http.get(f"{base}/healthz") as resp:
                assert (resp.status, await resp.text()) == (500, "failed: toggle\n")
            async with http.get(f"{base}/readyz") as resp:
                assert (resp.status, await resp.text()) == (500, "failed: broken\n")
    finally:
        await server.close()
    await server.close()  # idempotent
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
    except OSError:
        pass
    else:
        writer.close()
        raise AssertionError("server still listening after close")
