"""Controller CPU of the sync path alone: one job's syncs against the in-memory API, no HTTP.

For each kind (an MPIJob of 4 workers, a TFJob of 2 PS and 4 workers), ``--jobs`` jobs are
created in the in-memory API (:class:`tests.engine_harness.EngineHarness`) and each is synced
twice: the first sync creates its children and writes its status (the in-memory API's own
work included), the second finds everything in place and writes nothing (the sync's reading,
defaulting, validating and deciding alone: what every pod update of a running job costs).
Prints one JSON line: CPU microseconds per sync of each, best of ``--repeat`` rounds, and
``settle_us``, what the harness's own event-loop turns around each sync cost with nothing to
do (``EngineHarness.sync`` lets the caches settle before and after the sync; both figures
include it, a controller's sync does not). Compare two commits by running it in each checkout.
Not a test: no asserts on timing.

    PYTHONPATH=$PWD .venv/bin/python bench/sync_bench.py [--jobs 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from tests.engine_harness import EngineHarness
from tests.mpijobs import small_job
from tests.tfjobs import replica, tfjob


def _mpijob(name: str) -> dict[str, Any]:
    return small_job(name, workers=4)


def _tfjob(name: str) -> dict[str, Any]:
    return tfjob(name, {"PS": replica(2, port=2222), "Worker": replica(4, port=2222)})


KINDS = {"mpijob": ("MPIJob", _mpijob), "tfjob": ("TFJob", _tfjob)}


async def _round(scheme: str, jobs: int) -> tuple[float, float, float]:
    """CPU seconds of the first and of the second syncs of ``jobs`` jobs, and of the harness's
    settling around ``jobs`` syncs alone."""
    kind, make = KINDS[scheme]
    async with EngineHarness(schemes=(scheme,)) as h:
        names = [f"job-{i}" for i in range(jobs)]
        for name in names:
            h.create(make(name))
        await h.settle()
        first = second = 0.0
        for name in names:
            start = time.process_time()
            await h.sync(name, kind)
            first += time.process_time() - start
        for name in names:
            start = time.process_time()
            await h.sync(name, kind)
            second += time.process_time() - start
        settle = 0.0
        for _ in names:
            start = time.process_time()
            await h.settle()
            await h.settle()
            settle += time.process_time() - start
        return first, second, settle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"jobs": args.jobs}
    for scheme in KINDS:
        rounds = [asyncio.run(_round(scheme, args.jobs)) for _ in range(args.repeat)]
        per = 1e6 / args.jobs
        out[scheme] = {"first_sync_us": round(per * min(r[0] for r in rounds)),
                       "steady_sync_us": round(per * min(r[1] for r in rounds)),
                       "settle_us": round(per * min(r[2] for r in rounds))}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
