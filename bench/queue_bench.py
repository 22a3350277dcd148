"""Work-queue throughput: items per second through ``add`` + ``get`` + ``done``.

A producer adds ``--ops`` distinct keys in chunks (yielding to the loop between chunks), while
N workers take, "reconcile" (one ``await asyncio.sleep(0)``, the cheapest possible await) and
finish them. Runs 1 and 8 workers, with and without metrics (a named queue), on the real loop
clock. A last case measures the bare queue: one task adds everything, then takes and finishes
everything (``get`` never suspends). Prints one JSON line and writes
``bench-results/queue.json``. Not a test: no asserts on timing.

    .venv/bin/python bench/queue_bench.py [--ops 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from pathlib import Path

from mpi_controller.runtime.workqueue import RateLimitingQueue

RESULTS = Path(__file__).resolve().parent.parent / "bench-results" / "queue.json"
CHUNK = 1000


async def _worker(queue: RateLimitingQueue[str]) -> int:
    handled = 0
    while True:
        key, shutdown = await queue.get()
        if shutdown or key is None:
            return handled
        await asyncio.sleep(0)
        queue.done(key)
        handled += 1


async def _producer(queue: RateLimitingQueue[str], ops: int) -> None:
    for start in range(0, ops, CHUNK):
        for i in range(start, min(start + CHUNK, ops)):
            queue.add(f"ns/job-{i}")
        await asyncio.sleep(0)
    await queue.shut_down_with_drain()


async def _run_once(ops: int, workers: int, name: str | None) -> float:
    queue: RateLimitingQueue[str] = RateLimitingQueue(name=name)
    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(_worker(queue)) for _ in range(workers)]
        group.create_task(_producer(queue, ops))
    elapsed = time.perf_counter() - started
    handled = sum(t.result() for t in tasks)
    if handled != ops:
        raise RuntimeError(f"handled {handled} of {ops} items")
    return ops / elapsed


async def _raw_once(ops: int) -> float:
    """One task: add everything, then get+done everything (no await ever suspends)."""
    queue: RateLimitingQueue[str] = RateLimitingQueue()
    keys = [f"ns/job-{i}" for i in range(ops)]
    started = time.perf_counter()
    for key in keys:
        queue.add(key)
    for _ in range(ops):
        item, _shutdown = await queue.get()
        assert item is not None
        queue.done(item)
    return ops / (time.perf_counter() - started)


def _raw_case(ops: int, repeat: int) -> dict[str, object]:
    rates = [asyncio.run(_raw_once(ops)) for _ in range(repeat)]
    return {
        "workers": "none (single task, no suspension)",
        "metrics": False,
        "ops_per_s": round(max(rates)),
        "ops_per_s_median": round(sorted(rates)[len(rates) // 2]),
    }


def _case(ops: int, workers: int, metrics: bool, repeat: int) -> dict[str, object]:
    rates = []
    for run in range(repeat):
        name = f"bench-{workers}-{run}" if metrics else None
        rates.append(asyncio.run(_run_once(ops, workers, name)))
    return {
        "workers": workers,
        "metrics": metrics,
        "ops_per_s": round(max(rates)),
        "ops_per_s_median": round(sorted(rates)[len(rates) // 2]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cases = [
        _case(args.ops, workers, metrics, args.repeat)
        for metrics in (False, True)
        for workers in (1, 8)
    ]
    cases.append(_raw_case(args.ops, args.repeat))
    report = {
        "bench": "workqueue add+get+done",
        "ops": args.ops,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "results": cases,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
