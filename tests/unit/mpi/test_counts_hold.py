"""MPIJob ``v2beta1``: a status change of replica counts alone waits while the next change of
them is due (``decisions.counts_hold``): while a pod is Pending (1 s), and from the end of the
launcher's pod until its Job is ``Complete`` (2 s: the Job controller batches a Job's pod
updates for 1 s before it counts an ended pod). Conditions and times are written at once, with
the counts of that moment."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.mpi.decisions import (
    LAUNCHER_FINISH_HOLD,
    LAUNCHER_STARTING_HOLD,
    PODS_STARTING_HOLD,
    counts_hold,
)
from tests.engine_harness import EngineHarness
from tests.unit.mpi.test_kind import (
    NS,
    add_launcher_pod,
    all_running,
    conditions,
    finish_launcher,
    set_pod,
    started,
)

STATUS_WRITE = ("update", "mpijobs/status", NS, "pi")


def status_writes(h: EngineHarness) -> list[tuple[str, str, str, str]]:
    """The status writes since the mark (a worker's start also rewrites the ConfigMap)."""
    return [w for w in h.writes() if w[1] == "mpijobs/status"]


def pod(phase: str, *, deleted: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"deletionTimestamp": "2026-01-01T00:00:00Z"} if deleted else {}
    return {"metadata": meta, "status": {"phase": phase}}


LAUNCHER = {"status": {"active": 1}}
SUSPENDED = {"spec": {"suspend": True}, "status": {}}
DONE = {"status": {"conditions": [{"type": "Complete", "status": "True"}]}}


@pytest.mark.parametrize(("launcher", "launcher_pods", "workers", "expected"), [
    # the launcher's pods all ended, its Job not finished yet
    (LAUNCHER, [pod("Succeeded")], [pod("Running")], LAUNCHER_FINISH_HOLD),
    (LAUNCHER, [pod("Failed")], [pod("Running")], LAUNCHER_FINISH_HOLD),
    (LAUNCHER, [pod("Failed"), pod("Succeeded")], [], LAUNCHER_FINISH_HOLD),
    # ... one still runs, or is being deleted
    (LAUNCHER, [pod("Failed"), pod("Running")], [pod("Running")], None),
    (LAUNCHER, [pod("Succeeded", deleted=True)], [pod("Running")], None),
    (LAUNCHER, [pod("Pending", deleted=True)], [pod("Running")], None),
    # ... none runs yet: not made, or Pending (Running is due), the Job not suspended
    (LAUNCHER, [], [pod("Running")], LAUNCHER_STARTING_HOLD),
    (LAUNCHER, [pod("Pending")], [pod("Running")], LAUNCHER_STARTING_HOLD),
    (LAUNCHER, [pod("Pending")], [pod("Running"), pod("Pending")], LAUNCHER_STARTING_HOLD),
    (SUSPENDED, [], [pod("Running")], None),
    (SUSPENDED, [], [pod("Running"), pod("Pending")], PODS_STARTING_HOLD),
    # the Job finished: the status is final
    (DONE, [pod("Succeeded")], [], None),
    (DONE, [pod("Pending")], [pod("Pending")], None),
    # a worker still Pending, the launcher running or not made
    (LAUNCHER, [pod("Running")], [pod("Running"), pod("Pending")], PODS_STARTING_HOLD),
    (None, [], [pod("Running"), pod("Pending")], PODS_STARTING_HOLD),
    (None, [], [pod("Running"), pod("Pending", deleted=True)], None),
    (None, [], [pod("Running"), pod("Running")], None),
])
def test_counts_hold(launcher: dict[str, Any] | None, launcher_pods: list[dict[str, Any]],
                     workers: list[dict[str, Any]], expected: float | None) -> None:
    assert counts_hold(launcher, launcher_pods, workers) == expected


async def test_counts_wait_for_the_running_condition_and_for_the_launchers_complete() -> None:
    async with EngineHarness() as h:
        await started(h)  # children and Created
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Pending")
        h.mark()
        await h.sync("pi")
        assert status_writes(h) == []  # a worker's count alone, the other worker Pending
        assert h.job("pi")["status"]["replicaStatuses"] == {"Launcher": {}, "Worker": {}}
        set_pod(h, "pi-worker-1", "Running", ready=True)
        add_launcher_pod(h, "Running")
        await h.sync("pi")
        assert status_writes(h) == [STATUS_WRITE]  # Running, with every count
        assert conditions(h)[-1] == ("Running", "True", "MPIJobRunning")
        assert h.job("pi")["status"]["replicaStatuses"] == {
            "Launcher": {"active": 1}, "Worker": {"active": 2}}
        h.mark()
        set_pod(h, "pi-launcher-x", "Succeeded")
        await h.sync("pi")
        assert status_writes(h) == []  # the launcher no longer active, its Job not Complete yet
        h.clock.advance(LAUNCHER_FINISH_HOLD - 0.1)
        await h.sync("pi")
        assert status_writes(h) == []
        finish_launcher(h)
        await h.sync("pi")
        assert status_writes(h) == [STATUS_WRITE]  # Succeeded and the counts in one write
        assert conditions(h)[-1] == ("Succeeded", "True", "MPIJobSucceeded")
        assert h.job("pi")["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}


async def test_the_workers_counts_wait_for_the_launcher_to_run() -> None:
    """Every worker runs before the launcher's pod does (a burst): one write, ``Running`` with
    every count, not the workers' counts first and ``Running`` a moment later."""
    async with EngineHarness() as h:
        await started(h)
        h.mark()
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Running", ready=True)
        result = await h.sync("pi")  # the launcher Job has no pod yet
        assert result.requeue_after == LAUNCHER_STARTING_HOLD
        h.clock.advance(PODS_STARTING_HOLD + 0.5)
        add_launcher_pod(h, "Pending")
        await h.sync("pi")
        assert status_writes(h) == []
        set_pod(h, "pi-launcher-x", "Running")
        await h.sync("pi")
        assert status_writes(h) == [STATUS_WRITE]
        assert conditions(h)[-1] == ("Running", "True", "MPIJobRunning")
        assert h.job("pi")["status"]["replicaStatuses"] == {
            "Launcher": {"active": 1}, "Worker": {"active": 2}}


async def test_a_held_count_is_written_when_its_window_ends() -> None:
    async with EngineHarness() as h:
        await started(h)
        await all_running(h)
        set_pod(h, "pi-launcher-x", "Succeeded")
        h.mark()
        result = await h.sync("pi")
        assert result.requeue_after == LAUNCHER_FINISH_HOLD  # held; synced again then
        assert status_writes(h) == []
        h.clock.advance(LAUNCHER_FINISH_HOLD)
        await h.sync("pi")
        assert status_writes(h) == [STATUS_WRITE]
        assert conditions(h)[-1] == ("Running", "True", "MPIJobRunning")
        assert h.job("pi")["status"]["replicaStatuses"] == {"Launcher": {}, "Worker": {"active": 2}}


async def test_no_hold_when_the_engine_holds_nothing() -> None:
    async with EngineHarness(status_counts_hold=0.0) as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Pending")
        h.mark()
        await h.sync("pi")
        assert status_writes(h) == [STATUS_WRITE]
        assert h.job("pi")["status"]["replicaStatuses"] == {"Launcher": {}, "Worker": {"active": 1}}
