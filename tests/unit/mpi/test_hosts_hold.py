"""MPIJob ``v2beta1``: hosts added to ``discover_hosts.sh`` wait while other workers of the job
are still starting (``decisions.hosts_hold``), so the ConfigMap is written once as the workers
come up together rather than once per worker; at most ``HOSTS_HOLD`` seconds from the first
sync that held them. Hosts taken away, a changed hostfile, and a ConfigMap that is not the
job's are written (or reported) at once, as upstream's ``updateDiscoverHostsInConfigMap``
does on every sync (mpi-operator v0.8.2)."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.kube.resources import CONFIGMAPS
from mpi_controller.mpi import configmap, naming
from mpi_controller.mpi.decisions import HOSTS_HOLD, hosts_hold
from mpi_controller.mpi.features import SSH_READINESS_PORT_ANNOTATION
from tests.engine_harness import EngineHarness
from tests.unit.mpi.test_kind import NS, job, set_pod, started

EMPTY = "#!/bin/sh\n"
W0, W1 = "echo pi-worker-0.pi.ns.svc\n", "echo pi-worker-1.pi.ns.svc\n"
CM_WRITE = ("update", "configmaps", NS, "pi-config")


def owned_job(**annotations: str) -> dict[str, Any]:
    body = job()
    body["metadata"].update(uid="uid-pi", annotations=annotations)
    return body


def worker(index: int, phase: str, *, ready: bool = True, deleted: bool = False,
           ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"pi-worker-{index}", "namespace": NS,
                            "labels": naming.worker_selector("pi")}
    if deleted:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {
        "phase": phase, "conditions": [{"type": "Ready", "status": str(ready)}]}}


def config_map(body: dict[str, Any], script: str, **data: str) -> dict[str, Any]:
    out = configmap.new_config_map(body)
    out["data"].update({naming.DISCOVER_HOSTS_SCRIPT_NAME: script, **data})
    return out


@pytest.mark.parametrize(("old", "new", "expected"), [
    (EMPTY, EMPTY + W0, True),
    (EMPTY + W0, EMPTY + W0 + W1, True),
    (EMPTY + W0 + W1, EMPTY + W0, False),  # a host taken away
    (EMPTY + W0, EMPTY + W1, False),  # one replaced by another
    (EMPTY + W0, EMPTY + W0, False),  # nothing to write
])
def test_only_hosts_added(old: str, new: str, expected: bool) -> None:
    body = owned_job()
    assert configmap.only_hosts_added(config_map(body, old), config_map(body, new)) is expected


def test_a_changed_hostfile_is_not_only_hosts_added() -> None:
    body = owned_job()
    assert not configmap.only_hosts_added(config_map(body, EMPTY),
                                          config_map(body, EMPTY + W0, hostfile="other\n"))


@pytest.mark.parametrize(("pods", "expected"), [
    # worker-0 Running: listed; worker-1 still starting or not
    ([worker(0, "Running"), worker(1, "Pending")], HOSTS_HOLD),
    ([worker(0, "Running"), worker(1, "Running")], None),
    ([worker(0, "Running"), worker(1, "Failed")], None),
    ([worker(0, "Running"), worker(1, "Pending", deleted=True)], None),
    ([worker(0, "Running")], None),  # the other not made yet (or gone): nothing to wait for
    ([worker(0, "Running"), worker(1, "Running", ready=False)], None),  # not Ready: no matter
])
def test_hosts_hold(pods: list[dict[str, Any]], expected: float | None) -> None:
    body = owned_job()
    existing = config_map(body, EMPTY)
    desired = configmap.desired_config_map(body, pods)
    assert hosts_hold(body, existing, desired, pods) == expected


def test_with_ssh_readiness_a_running_worker_not_ready_is_still_starting() -> None:
    body = owned_job(**{SSH_READINESS_PORT_ANNOTATION: "2222"})
    pods = [worker(0, "Running"), worker(1, "Running", ready=False)]
    desired = configmap.desired_config_map(body, pods)
    assert desired["data"][naming.DISCOVER_HOSTS_SCRIPT_NAME] == EMPTY + W0
    assert hosts_hold(body, config_map(body, EMPTY), desired, pods) == HOSTS_HOLD


def test_nothing_is_held_of_a_config_map_not_the_jobs_or_not_only_hosts_added() -> None:
    body = owned_job()
    pods = [worker(0, "Running"), worker(1, "Pending")]
    desired = configmap.desired_config_map(body, pods)
    foreign = config_map(body, EMPTY)
    foreign["metadata"]["ownerReferences"] = []
    assert hosts_hold(body, foreign, desired, pods) is None
    assert hosts_hold(body, config_map(body, EMPTY + W1), desired, pods) is None


def script(h: EngineHarness) -> str:
    stored = h.stored(CONFIGMAPS, "pi-config")
    assert stored is not None
    return str(stored["data"][naming.DISCOVER_HOSTS_SCRIPT_NAME])


def cm_writes(h: EngineHarness) -> list[tuple[str, str, str, str]]:
    return [w for w in h.writes() if w[1] == "configmaps"]


async def test_hosts_added_wait_for_the_workers_still_starting() -> None:
    async with EngineHarness() as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Pending")
        result = await h.sync("pi")
        assert cm_writes(h) == []
        assert script(h) == EMPTY
        assert result is not None
        assert result.requeue_after == HOSTS_HOLD
        set_pod(h, "pi-worker-1", "Running", ready=True)
        await h.sync("pi")
        assert cm_writes(h) == [CM_WRITE]  # once, with both
        assert script(h) == EMPTY + W0 + W1


async def test_held_hosts_are_written_when_the_window_ends() -> None:
    async with EngineHarness() as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Pending")
        await h.sync("pi")
        h.clock.advance(HOSTS_HOLD - 0.1)
        await h.sync("pi")  # the window does not start again
        assert cm_writes(h) == []
        h.clock.advance(0.1)
        await h.sync("pi")
        assert cm_writes(h) == [CM_WRITE]
        assert script(h) == EMPTY + W0
        h.mark()
        set_pod(h, "pi-worker-1", "Running", ready=True)
        await h.sync("pi")  # no worker left starting: at once
        assert cm_writes(h) == [CM_WRITE]
        assert script(h) == EMPTY + W0 + W1


async def test_a_host_taken_away_is_written_at_once() -> None:
    async with EngineHarness() as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Running", ready=True)
        await h.sync("pi")
        assert script(h) == EMPTY + W0 + W1
        h.mark()
        set_pod(h, "pi-worker-1", "Pending")  # as a worker made again
        await h.sync("pi")
        assert cm_writes(h) == [CM_WRITE]
        assert script(h) == EMPTY + W0


async def test_no_hold_when_the_engine_holds_nothing() -> None:
    async with EngineHarness(status_counts_hold=0.0) as h:
        await started(h)
        set_pod(h, "pi-worker-0", "Running", ready=True)
        set_pod(h, "pi-worker-1", "Pending")
        await h.sync("pi")
        assert cm_writes(h) == [CM_WRITE]
        assert script(h) == EMPTY + W0
