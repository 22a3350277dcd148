"""Controller CPU per API request: the client's own cost of one write, apart from any sync.

Creates ``--requests`` Events (a small body, the write a job's lifecycle makes most of) in a
fresh namespace through :class:`~mpi_controller.runtime.rest.RestClient`, ``--concurrency`` at
once, with no client-side rate limit, and reports the process CPU time per request (and its
user and system parts), best of ``--repeat`` rounds. ``--connections N`` caps the client's
plain-request pool (:mod:`~mpi_controller.runtime.http1`); ``--connections 0`` sends every
request through aiohttp, as before that pool. Prints one JSON line. For where the time
goes, run it under ``py-spy record --format raw`` and read the stacks with
``bench/profile_summary.py --busy --functions`` (cProfile misattributes coroutines' time).
Not a test: no asserts on timing.

    KUBECONFIG=~/.cache/mpi-controller/cluster-x/kubeconfig \\
        .venv/bin/python bench/request_bench.py [--requests 500] [--concurrency 16] \\
        [--connections 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid

from mpi_controller.kube.resources import EVENTS, NAMESPACES
from mpi_controller.runtime.rest import DEFAULT_MAX_CONNECTIONS, RestClient


def _event(namespace: str, index: int) -> dict[str, object]:
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"bench.{index:x}", "namespace": namespace},
        "involvedObject": {"kind": "TFJob", "apiVersion": "kubeflow.org/v1",
                           "name": "bench", "namespace": namespace, "uid": str(uuid.uuid4())},
        "reason": "SuccessfulCreatePod", "message": f"Created pod: bench-worker-{index}",
        "type": "Normal", "source": {"component": "request-bench"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 1,
    }


async def _round(kube: RestClient, namespace: str, start: int, count: int,
                 concurrency: int) -> tuple[float, float, float]:
    """CPU seconds (user, system) and wall seconds of ``count`` creates, ``concurrency`` at
    once."""
    slots = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with slots:
            await kube.create(EVENTS, _event(namespace, index), namespace=namespace)

    # Warm the connection pool so that the round measures requests, not TLS handshakes.
    await asyncio.gather(*(one(start + count + i) for i in range(concurrency)))
    before = os.times()
    await asyncio.gather(*(one(start + i) for i in range(count)))
    after = os.times()
    return (after.user - before.user, after.system - before.system,
            after.elapsed - before.elapsed)


async def _main(args: argparse.Namespace) -> dict[str, object]:
    kube = await RestClient.from_kubeconfig(qps=0, max_connections=args.connections)
    namespace = f"request-bench-{uuid.uuid4().hex[:6]}"
    await kube.create(NAMESPACES, {"metadata": {"name": namespace}})
    rounds: list[tuple[float, float, float]] = []
    try:
        for r in range(args.repeat):
            start = r * (args.requests + args.concurrency)
            rounds.append(await _round(kube, namespace, start, args.requests,
                                       args.concurrency))
    finally:
        await kube.delete(NAMESPACES, namespace)
        await kube.close()
    best = min(rounds, key=lambda r: r[0] + r[1])
    per = 1e6 / args.requests
    return {"requests": args.requests, "concurrency": args.concurrency,
            "connections": args.connections,
            "cpu_us_per_request": round(per * (best[0] + best[1]), 1),
            "user_us": round(per * best[0], 1), "system_us": round(per * best[1], 1),
            "rounds_us": [round(per * (r[0] + r[1]), 1) for r in rounds],
            "requests_per_s": [round(args.requests / r[2]) for r in rounds]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                        help="plain-request pool size; 0: every request through aiohttp")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(_main(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
