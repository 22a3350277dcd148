"""bench/rss_watch.py: a server's resident memory read from /proc, and a wave of requests
cancelled as soon as that memory reaches the limit."""

from __future__ import annotations

import asyncio
import os

from bench.rss_watch import RssWatch, rss_mb

STATUS = "Name:\tkube-apiserver\nVmPeak:\t 9000000 kB\nVmRSS:\t  2097152 kB\nThreads:\t40\n"


def test_rss_is_the_vmrss_line_in_mb() -> None:
    assert rss_mb(STATUS) == 2048.0
    assert rss_mb("Name:\tzombie\n") == 0.0


def test_work_under_the_limit_returns_its_result() -> None:
    watch = RssWatch(os.getpid(), limit_mb=10**9, interval=0.01)

    async def work() -> str:
        await asyncio.sleep(0.05)
        return "done"
    assert asyncio.run(watch.guard(work())) == "done"
    assert (watch.exceeded, watch.peak_mb > 0) == (False, True)


def test_work_is_cancelled_when_the_limit_is_reached() -> None:
    watch = RssWatch(os.getpid(), limit_mb=1, interval=0.01)

    async def run() -> tuple[str | None, bool]:
        pending: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await watch.guard(pending), pending.cancelled()
    assert asyncio.run(asyncio.wait_for(run(), 5)) == (None, True)
    assert watch.exceeded is True
    watch.reset()
    assert watch.exceeded is False


def test_a_process_that_is_gone_reads_as_zero() -> None:
    watch = RssWatch(2**22 + 12345, limit_mb=1)
    assert watch.sample() == 0.0
