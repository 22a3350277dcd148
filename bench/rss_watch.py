"""A watch on a server's resident memory, for benchmarks that can push it too far.

:class:`RssWatch` samples ``/proc/<pid>/status`` (``VmRSS``) every ``interval`` seconds while
its task runs and keeps the peak since the last :meth:`RssWatch.reset`. :meth:`RssWatch.guard`
runs an awaitable and cancels it as soon as a sample reaches ``limit_mb``: the benchmark's
requests are dropped (the server then frees what it held for them) instead of the machine
running out of memory. The limit is where the requests are dropped, not a cap: a
kube-apiserver goes on encoding lists whose clients have gone until its request timeout (60 s),
and was seen to grow from 6.0 to 8.4 GB in the 40 s after such a cancellation. A process that
is gone reads as 0 MB.

:func:`rss_mb` (pure) parses a ``/proc/<pid>/status`` text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

__all__ = ["RssWatch", "rss_mb"]

T = TypeVar("T")


def rss_mb(status: str) -> float:
    """``VmRSS`` of a ``/proc/<pid>/status`` text in MB (0.0 when absent)."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssWatch:
    """The resident memory of process ``pid``: peak since :meth:`reset`, and a limit."""

    def __init__(self, pid: int, *, limit_mb: float, interval: float = 0.25) -> None:
        self.pid = pid
        self.limit_mb = limit_mb
        self.interval = interval
        self.peak_mb = 0.0
        self.exceeded = False

    def sample(self) -> float:
        try:
            mb = rss_mb(Path(f"/proc/{self.pid}/status").read_text())
        except OSError:
            mb = 0.0
        self.peak_mb = max(self.peak_mb, mb)
        return mb

    def reset(self) -> None:
        self.peak_mb = self.sample()
        self.exceeded = False

    async def guard(self, work: Awaitable[T]) -> T | None:
        """``work``'s result; None (and :attr:`exceeded` set) when the limit was reached first
        and ``work`` was cancelled."""
        task = asyncio.ensure_future(work)
        while not task.done():
            if self.sample() >= self.limit_mb:
                self.exceeded = True
                task.cancel()
                await asyncio.wait({task})
                return None
            await asyncio.wait({task}, timeout=self.interval)
        return task.result()
