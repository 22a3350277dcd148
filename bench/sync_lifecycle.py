"""Controller CPU of the syncs of whole job lifecycles, against the in-memory API, no HTTP.

Each of ``--jobs`` jobs goes through its lifecycle in :class:`tests.engine_harness.EngineHarness`
with a sync after every change and another after it (the status write's echo, or nothing new):

* TFJob of 2 PS and 4 workers: created; each pod Running (a running container), one after the
  other; then workers 1, 2, 3 and 0 Succeeded (exit code 0): 22 syncs.
* MPIJob of 4 workers: created; each worker Running and Ready; the launcher Job Complete:
  12 syncs.

Only the time inside ``JobController.sync`` counts (the harness's settling between syncs does
not; the in-memory API's answers to the sync's own writes do). Prints one JSON line: sync CPU
per job lifecycle (ms), syncs and writes (Events included) per job, best of ``--repeat``
rounds. Compare two commits by running it in each checkout. Not a test: no asserts on timing.

    PYTHONPATH=$PWD .venv/bin/python bench/sync_lifecycle.py [--jobs 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from mpi_controller.kube.resources import JOBS, PODS
from tests.engine_harness import NAMESPACE, EngineHarness
from tests.kind_steps import KindSteps
from tests.mpijobs import small_job
from tests.tfjobs import replica, tfjob

TF = KindSteps("TFJob", container="tensorflow", framework="tensorflow", job="job")
Change = Callable[[EngineHarness, str], None]


def _pod_change(pod: str, status: dict[str, Any]) -> Change:
    def change(h: EngineHarness, job: str) -> None:
        h.api.modify(PODS, f"{job}-{pod}", lambda p: p.update(status=dict(status)),
                     namespace=NAMESPACE)
    return change


def _tf_pod(pod: str, phase: str, code: int | None = None) -> Change:
    return lambda h, job: TF.set_pod(h, f"{job}-{pod}", phase, code=code)


def _launcher_complete(h: EngineHarness, job: str) -> None:
    def change(launcher: dict[str, Any]) -> None:
        launcher["status"] = {"conditions": [{"type": "Complete", "status": "True"}],
                              "succeeded": 1, "completionTime": "2026-01-01T00:01:00Z"}
    h.api.modify(JOBS, f"{job}-launcher", change, namespace=NAMESPACE)


READY = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
KINDS: dict[str, tuple[str, Callable[[str], dict[str, Any]], list[Change]]] = {
    "tfjob": ("TFJob",
              lambda name: tfjob(name, {"PS": replica(2, port=2222),
                                        "Worker": replica(4, port=2222)}),
              [_tf_pod(p, "Running") for p in ("ps-0", "ps-1", "worker-0", "worker-1",
                                                "worker-2", "worker-3")]
              + [_tf_pod(f"worker-{i}", "Succeeded", 0) for i in (1, 2, 3, 0)]),
    "mpijob": ("MPIJob", lambda name: small_job(name, workers=4),
               [_pod_change(f"worker-{i}", READY) for i in range(4)] + [_launcher_complete]),
}


async def _round(scheme: str, jobs: int) -> tuple[float, float, float]:
    """CPU seconds of the syncs of ``jobs`` lifecycles, syncs and writes."""
    kind, make, changes = KINDS[scheme]
    async with EngineHarness(schemes=(scheme,)) as h:
        controller = h.controller_for(kind)
        names = [f"job-{i}" for i in range(jobs)]
        for name in names:
            h.create(make(name))
        cpu, syncs = 0.0, 0

        async def sync(name: str) -> None:
            nonlocal cpu, syncs
            await h.settle()
            start = time.process_time()
            await controller.sync(f"{NAMESPACE}/{name}")
            cpu += time.process_time() - start
            syncs += 1

        for name in names:
            await sync(name)
            await sync(name)
        for change in changes:
            for name in names:
                change(h, name)
                await sync(name)
                await sync(name)
        await h.settle()
        writes = sum(1 for r in h.api.requests if r.is_write)
        return cpu, syncs, writes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"jobs": args.jobs}
    for scheme in KINDS:
        rounds = [asyncio.run(_round(scheme, args.jobs)) for _ in range(args.repeat)]
        cpu, syncs, writes = min(rounds)
        out[scheme] = {"sync_cpu_ms_per_job": round(1e3 * cpu / args.jobs, 2),
                       "syncs_per_job": syncs / args.jobs, "writes_per_job": writes / args.jobs}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
