"""MPIJobs created as ``kubeflow.org/v1`` run in training-operator v1.9's kubectl-exec launch
mode (``pkg/controller.v1/mpi/mpijob_controller.go``), on the in-memory API:
the launcher pod with the ``kubectl-delivery`` init container, ``kubexec.sh``, the per-job
ServiceAccount, Role and RoleBinding, ``sleep 365d`` workers, the hostfile and
``discover_hosts.sh`` following the Running workers, elastic scaling, the status rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.engine.writer import ResourceNotControlled
from mpi_controller.kube.resources import (
    CONFIGMAPS,
    EVENTS,
    PODS,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
)
from mpi_controller.mpi.conversion import convert
from mpi_controller.mpi.options import MPIJOBS
from tests.engine_harness import EngineHarness

REPO = Path(__file__).resolve().parents[3]
NS = "ns"
NAME = "tensorflow-mnist-elastic"
Golden = Callable[[str, Any], None]
SERVER_FIELDS = ("creationTimestamp", "resourceVersion", "uid", "generation")


def elastic_job() -> dict[str, Any]:
    """examples/v1/tensorflow-mnist-elastic.yaml (the issue's manifest, verbatim), stored as
    the API server stores a create through ``v1``."""
    doc = yaml.safe_load((REPO / "examples/v1/tensorflow-mnist-elastic.yaml").read_text())
    doc["metadata"]["namespace"] = NS
    return convert(doc, "v2beta1")


def clean(obj: dict[str, Any] | None) -> dict[str, Any]:
    """``obj`` without what the API server sets (the owner's uid shown as ``UID``)."""
    assert obj is not None
    meta = obj["metadata"]
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    for ref in meta.get("ownerReferences", []):
        ref["uid"] = "UID"
    obj.pop("status", None)
    return obj


def set_pod(h: EngineHarness, name: str, phase: str) -> None:
    def change(pod: dict[str, Any]) -> None:
        pod["status"] = {"phase": phase}
    h.api.modify(PODS, name, change, namespace=NS)


def scale(h: EngineHarness, replicas: int) -> None:
    def change(job: dict[str, Any]) -> None:
        job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = replicas
    h.api.modify(MPIJOBS, NAME, change, namespace=NS)


def conditions(h: EngineHarness) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"])
            for c in h.job(NAME)["status"]["conditions"]]


def config(h: EngineHarness) -> dict[str, str]:
    stored = h.stored(CONFIGMAPS, f"{NAME}-config")
    assert stored is not None
    data: dict[str, str] = stored["data"]
    return data


def exec_names(h: EngineHarness) -> list[str]:
    role = h.stored(ROLES, f"{NAME}-launcher")
    assert role is not None
    names: list[str] = role["rules"][1]["resourceNames"]
    return names


def worker_pods(h: EngineHarness) -> list[str]:
    return sorted(p["metadata"]["name"] for p in h.api.objects(PODS, NS)
                  if "worker" in p["metadata"]["name"])


async def test_first_sync_creates_the_launchers_identity_the_workers_and_the_launcher_pod(
        golden: Golden) -> None:
    async with EngineHarness() as h:
        h.create(elastic_job())
        h.mark()
        await h.sync(NAME)
        assert h.writes() == [
            ("create", "serviceaccounts", NS, f"{NAME}-launcher"),
            ("create", "configmaps", NS, f"{NAME}-config"),
            ("create", "roles", NS, f"{NAME}-launcher"),
            ("create", "rolebindings", NS, f"{NAME}-launcher"),
            ("create", "pods", NS, f"{NAME}-worker-0"),
            ("create", "pods", NS, f"{NAME}-worker-1"),
            ("create", "pods", NS, f"{NAME}-launcher"),
            ("update", "mpijobs/status", NS, NAME),
        ]
        assert h.events() == [
            ("Normal", "SuccessfulCreatePod", f"Created worker pod: {NAME}-worker-0"),
            ("Normal", "SuccessfulCreatePod", f"Created worker pod: {NAME}-worker-1"),
            ("Normal", "MPIJobRunning", f"launcher pod created success: {NAME}-launcher"),
        ]
        # training-operator's MPIJob reconciler reports as "mpijob-controller"
        assert {(e["source"]["component"], e["reportingComponent"])
                for e in h.api.objects(EVENTS, NS)} == {("mpijob-controller", "mpijob-controller")}
        status = h.job(NAME)["status"]
        assert conditions(h) == [("Created", "True", "MPIJobCreated",
                                  f"MPIJob {NAME} is created.")]
        assert status["replicaStatuses"] == {"Launcher": {}, "Worker": {}}
        assert status["startTime"] == "2026-01-01T00:00:00Z"
        # the stored job stays as written (v2beta1 storage, the v1 origin kept)
        assert h.job(NAME)["spec"] == elastic_job()["spec"]
        golden("v1_elastic_first_sync", [
            clean(h.stored(SERVICE_ACCOUNTS, f"{NAME}-launcher")),
            clean(h.stored(CONFIGMAPS, f"{NAME}-config")),
            clean(h.stored(ROLES, f"{NAME}-launcher")),
            clean(h.stored(ROLE_BINDINGS, f"{NAME}-launcher")),
            clean(h.stored(PODS, f"{NAME}-worker-0")),
            clean(h.stored(PODS, f"{NAME}-launcher")),
        ])


async def test_running_workers_reach_discover_hosts_and_the_job_runs() -> None:
    async with EngineHarness() as h:
        h.create(elastic_job())
        await h.sync(NAME)
        assert config(h)["discover_hosts.sh"] == "#!/bin/sh"
        assert config(h)["hostfile"] == (f"{NAME}-worker-0 slots=1\n"
                                         f"{NAME}-worker-1 slots=1\n")
        set_pod(h, f"{NAME}-worker-1", "Running")
        await h.sync(NAME)
        assert config(h)["discover_hosts.sh"] == f"#!/bin/sh\necho {NAME}-worker-1:1"
        for pod in (f"{NAME}-worker-0", f"{NAME}-launcher"):
            set_pod(h, pod, "Running")
        h.mark()
        await h.sync(NAME)
        assert h.writes() == [("update", "configmaps", NS, f"{NAME}-config"),
                              ("update", "mpijobs/status", NS, NAME)]
        assert config(h)["discover_hosts.sh"] == (f"#!/bin/sh\necho {NAME}-worker-0:1"
                                                  f"\necho {NAME}-worker-1:1")
        assert conditions(h) == [
            ("Created", "True", "MPIJobCreated", f"MPIJob {NAME} is created."),
            ("Running", "True", "MPIJobRunning", f"MPIJob {NAME} is running.")]
        assert h.job(NAME)["status"]["replicaStatuses"] == {"Launcher": {"active": 1},
                                                            "Worker": {"active": 2}}
        assert h.events()[-1] == ("Normal", "MPIJobRunning", f"MPIJob {NS}/{NAME} is running")


async def test_worker_counts_wait_for_the_launcher_while_it_is_pending() -> None:
    """The workers Running, the launcher Pending: their counts alone wait (1 s at most); the
    launcher Running makes the job Running in the next sync, with every count, in one
    status write."""
    async with EngineHarness() as h:
        h.create(elastic_job())
        await h.sync(NAME)
        set_pod(h, f"{NAME}-launcher", "Pending")
        for pod in (f"{NAME}-worker-0", f"{NAME}-worker-1"):
            set_pod(h, pod, "Running")
        h.mark()
        result = await h.sync(NAME)
        assert result.requeue_after == 1.0
        assert ("update", "mpijobs/status", NS, NAME) not in h.writes()
        h.clock.advance(0.5)
        set_pod(h, f"{NAME}-launcher", "Running")
        h.mark()
        assert await h.sync(NAME) is None
        assert h.writes()[-1] == ("update", "mpijobs/status", NS, NAME)
        assert conditions(h)[-1][:2] == ("Running", "True")
        assert h.job(NAME)["status"]["replicaStatuses"] == {"Launcher": {"active": 1},
                                                            "Worker": {"active": 2}}


async def test_elastic_scaling_creates_and_deletes_workers_and_follows_them() -> None:
    async with EngineHarness() as h:
        h.create(elastic_job())
        await h.sync(NAME)
        for pod in (f"{NAME}-worker-0", f"{NAME}-worker-1", f"{NAME}-launcher"):
            set_pod(h, pod, "Running")
        await h.sync(NAME)

        scale(h, 3)
        h.mark()
        await h.sync(NAME)
        assert h.writes()[:3] == [("update", "configmaps", NS, f"{NAME}-config"),
                                  ("update", "roles", NS, f"{NAME}-launcher"),
                                  ("create", "pods", NS, f"{NAME}-worker-2")]
        assert worker_pods(h) == [f"{NAME}-worker-{i}" for i in range(3)]
        assert exec_names(h) == [f"{NAME}-worker-{i}" for i in range(3)]
        assert config(h)["hostfile"] == "".join(f"{NAME}-worker-{i} slots=1\n"
                                                for i in range(3))
        set_pod(h, f"{NAME}-worker-2", "Running")
        await h.sync(NAME)
        assert config(h)["discover_hosts.sh"] == "#!/bin/sh" + "".join(
            f"\necho {NAME}-worker-{i}:1" for i in range(3))

        scale(h, 1)
        h.mark()
        await h.sync(NAME)
        assert ("delete", "pods", NS, f"{NAME}-worker-1") in h.writes()
        assert ("delete", "pods", NS, f"{NAME}-worker-2") in h.writes()
        assert worker_pods(h) == [f"{NAME}-worker-0"]
        assert exec_names(h) == [f"{NAME}-worker-0"]
        assert config(h)["hostfile"] == f"{NAME}-worker-0 slots=1\n"
        await h.sync(NAME)  # the deleted workers left the cache
        assert config(h)["discover_hosts.sh"] == f"#!/bin/sh\necho {NAME}-worker-0:1"


async def test_the_launcher_succeeding_completes_the_job_and_cleans_running_workers() -> None:
    async with EngineHarness() as h:
        h.create(elastic_job())
        await h.sync(NAME)
        for pod in (f"{NAME}-worker-0", f"{NAME}-worker-1"):
            set_pod(h, pod, "Running")
        set_pod(h, f"{NAME}-launcher", "Succeeded")
        h.mark()
        await h.sync(NAME)
        assert conditions(h)[-1] == ("Succeeded", "True", "MPIJobSucceeded",
                                     f"MPIJob {NAME} is successfully completed.")
        status = h.job(NAME)["status"]
        assert status["completionTime"] == "2026-01-01T00:00:00Z"
        assert status["replicaStatuses"]["Launcher"] == {"succeeded": 1}
        assert ("Normal", "MPIJobSucceeded",
                f"MPIJob {NAME} is successfully completed.") in h.events()
        # cleanPodPolicy Running: the Running workers go, the launcher stays
        await h.sync(NAME)
        assert worker_pods(h) == []
        assert h.stored(PODS, f"{NAME}-launcher") is not None


async def test_a_failed_launcher_fails_the_job_with_upstreams_reason() -> None:
    async with EngineHarness() as h:
        h.create(elastic_job())
        await h.sync(NAME)
        h.api.modify(PODS, f"{NAME}-launcher", lambda pod: pod.update(
            status={"phase": "Failed", "reason": "Error"}), namespace=NS)
        await h.sync(NAME)
        assert conditions(h)[-1] == (
            "Failed", "True", "MPIJobMPIJobFailed",
            f"MPIJob {NAME} is failed because 1 Launcher replica(s) failed.")
        assert h.job(NAME)["status"]["replicaStatuses"]["Launcher"] == {"failed": 1}
        assert ("Warning", "Error", f"MPIJob {NS}/{NAME} has failed") in h.events()
        assert ("Normal", "MPIJobFailed",
                f"MPIJob {NAME} is failed because 1 Launcher replica(s) failed.") in h.events()


async def test_an_invalid_v1_job_gets_upstreams_validation_event_and_nothing_else() -> None:
    job = elastic_job()
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    async with EngineHarness() as h:
        h.create(job)
        h.mark()
        await h.sync(NAME)
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "MPIJobFailedValidation",
            "MPIJob failed validation because MPIReplicaSpec is not valid: There must be only "
            "1 launcher replica")]


async def test_a_foreign_launcher_pod_is_reported_and_not_replaced() -> None:
    async with EngineHarness() as h:
        h.api.add(PODS, {"metadata": {"name": f"{NAME}-launcher", "namespace": NS, "labels": {
            "training.kubeflow.org/operator-name": "mpijob-controller",
            "training.kubeflow.org/job-name": NAME}}, "spec": {"containers": []}})
        h.create(elastic_job())
        h.mark()
        with pytest.raises(ResourceNotControlled):
            await h.sync(NAME)
        await h.settle()
        assert h.writes() == []
        assert h.events() == [(
            "Warning", "ErrResourceExists", f'Resource "{NAME}-launcher" of Kind "Pod" already '
            "exists and is not managed by MPIJob")]


async def test_a_suspended_v1_job_creates_nothing_until_resumed() -> None:
    """training-operator's ``runPolicy.suspend`` (the engine's ``ReconcileJobs``)."""
    job = elastic_job()
    job["spec"].setdefault("runPolicy", {})["suspend"] = True
    async with EngineHarness() as h:
        h.create(job)
        h.mark()
        await h.sync(NAME)
        assert h.writes() == [("update", "mpijobs/status", NS, NAME)]
        assert h.events() == [("Normal", "MPIJobSuspended", f"MPIJob {NAME} is suspended.")]
        assert conditions(h)[-1] == ("Suspended", "True", "MPIJobSuspended",
                                     f"MPIJob {NAME} is suspended.")

        def resume(stored: dict[str, Any]) -> None:
            stored["spec"]["runPolicy"]["suspend"] = False
        h.api.modify(MPIJOBS, NAME, resume, namespace=NS)
        h.mark()
        await h.sync(NAME)
        assert [w[:2] for w in h.writes()][-4:] == [
            ("create", "pods"), ("create", "pods"), ("create", "pods"),
            ("update", "mpijobs/status")]
        assert conditions(h)[-1] == ("Suspended", "False", "MPIJobResumed",
                                     f"MPIJob {NAME} is resumed.")


async def test_a_service_account_outside_the_cache_is_checked_by_create_then_trusted() -> None:
    """The launcher names an account of the user's (no ``app`` label: not cached). Upstream
    finds it in its lister and records ``ServiceAccount is exist``; here its create answers
    AlreadyExists, the account is used as it is, and the next syncs trust it for five
    minutes instead of asking again each time."""
    job = elastic_job()
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["serviceAccountName"] = "mine"
    async with EngineHarness() as h:
        h.api.add(SERVICE_ACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount",
                                     "metadata": {"name": "mine", "namespace": NS}})
        h.create(job)
        await h.settle()
        h.mark()
        await h.sync(NAME)

        def account_requests() -> list[tuple[str, str]]:
            return [(r.verb, r.name) for r in h.requests()
                    if r.resource == SERVICE_ACCOUNTS and r.verb in ("create", "get")]

        assert account_requests() == [("create", "mine"), ("get", "mine")]
        assert ("Normal", "ServiceAccount is exist", "ServiceAccount: mine") in h.events()
        stored = h.stored(PODS, f"{NAME}-launcher")
        assert stored is not None
        assert stored["spec"]["serviceAccountName"] == "mine"
        account = h.stored(SERVICE_ACCOUNTS, "mine")
        assert account is not None
        assert "ownerReferences" not in account["metadata"]  # used as it is, never adopted
        for _ in range(3):
            h.mark()
            await h.sync(NAME)
            assert account_requests() == []
        h.clock.advance(301)
        h.mark()
        await h.sync(NAME)
        assert account_requests() == [("create", "mine"), ("get", "mine")]
