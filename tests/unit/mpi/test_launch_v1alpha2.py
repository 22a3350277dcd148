"""MPIJobs created as ``kubeflow.org/v1alpha2`` run as mpi-operator v0.2.3 ran them
(``pkg/controllers/v1alpha2/mpi_job_controller.go``), on the in-memory API: ConfigMap,
ServiceAccount, Role, RoleBinding, the worker StatefulSet and the launcher batch Job, the
``group_name`` / ``mpi_job_name`` / ``mpi_role_type`` labels, the status from the Job and the
StatefulSet, cleanPodPolicy ``Running`` scaling the workers to 0."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from mpi_controller.kube.resources import JOBS, STATEFUL_SETS
from mpi_controller.mpi.conversion import convert
from tests.engine_harness import EngineHarness
from tests.unit.mpi.test_launch_v1 import clean

REPO = Path(__file__).resolve().parents[3]
NS = "ns"
NAME = "tensorflow-benchmarks"
Golden = Callable[[str, Any], None]


def benchmarks_job() -> dict[str, Any]:
    """examples/v1alpha2/tensorflow-benchmarks.yaml (verbatim), stored as a create through
    ``v1alpha2`` stores it."""
    doc = yaml.safe_load((REPO / "examples/v1alpha2/tensorflow-benchmarks.yaml").read_text())
    doc["metadata"]["namespace"] = NS
    return convert(doc, "v2beta1")


def conditions(h: EngineHarness) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"])
            for c in h.job(NAME)["status"]["conditions"]]


def set_status(h: EngineHarness, resource: Any, name: str, status: dict[str, Any]) -> None:
    h.api.modify(resource, name, lambda obj: obj.update(status=status), namespace=NS)


def workers(h: EngineHarness) -> int:
    sts = h.stored(STATEFUL_SETS, f"{NAME}-worker")
    assert sts is not None
    replicas: int = sts["spec"]["replicas"]
    return replicas


CREATED = ("Created", "True", "MPIJobCreated", f"MPIJob {NS}/{NAME} is created.")


async def test_first_sync_creates_the_statefulset_and_the_launcher_job(golden: Golden) -> None:
    async with EngineHarness() as h:
        h.create(benchmarks_job())
        h.mark()
        await h.sync(NAME)
        assert h.writes() == [
            ("create", "configmaps", NS, f"{NAME}-config"),
            ("create", "serviceaccounts", NS, f"{NAME}-launcher"),
            ("create", "roles", NS, f"{NAME}-launcher"),
            ("create", "rolebindings", NS, f"{NAME}-launcher"),
            ("create", "statefulsets", NS, f"{NAME}-worker"),
            ("create", "jobs", NS, f"{NAME}-launcher"),
            ("update", "mpijobs/status", NS, NAME),
        ]
        assert h.events() == []
        assert conditions(h) == [CREATED]
        assert h.job(NAME)["status"]["startTime"] == "2026-01-01T00:00:00Z"
        golden("v1alpha2_benchmarks_first_sync", [
            clean(h.stored(STATEFUL_SETS, f"{NAME}-worker")),
            clean(h.stored(JOBS, f"{NAME}-launcher")),
        ])


async def test_status_follows_the_launcher_job_and_the_statefulset() -> None:
    async with EngineHarness() as h:
        h.create(benchmarks_job())
        await h.sync(NAME)
        set_status(h, STATEFUL_SETS, f"{NAME}-worker", {"replicas": 2, "readyReplicas": 2})
        set_status(h, JOBS, f"{NAME}-launcher", {"active": 1})
        await h.sync(NAME)
        assert conditions(h) == [
            CREATED, ("Running", "True", "MPIJobRunning", f"MPIJob {NS}/{NAME} is running.")]
        assert h.job(NAME)["status"]["replicaStatuses"] == {"Launcher": {"active": 1},
                                                            "Worker": {"active": 2}}
        # the launcher's pod failed (restartPolicy Never) and the Job has not made the next
        set_status(h, JOBS, f"{NAME}-launcher", {"failed": 1})
        await h.sync(NAME)
        assert conditions(h)[-1] == ("Restarting", "True", "MPIJobRestarting",
                                     f"MPIJob {NS}/{NAME} is restarting.")
        assert [c[0] for c in conditions(h)] == ["Created", "Restarting"]


async def test_success_then_clean_pod_policy_running_scales_the_workers_to_zero() -> None:
    async with EngineHarness() as h:
        h.create(benchmarks_job())
        await h.sync(NAME)
        set_status(h, STATEFUL_SETS, f"{NAME}-worker", {"replicas": 2, "readyReplicas": 2})
        set_status(h, JOBS, f"{NAME}-launcher", {
            "succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
        await h.sync(NAME)
        assert conditions(h)[-1] == ("Succeeded", "True", "MPIJobSucceeded",
                                     f"MPIJob {NS}/{NAME} successfully completed.")
        assert h.events() == [("Normal", "MPIJobSucceeded",
                               f"MPIJob {NS}/{NAME} successfully completed.")]
        status = h.job(NAME)["status"]
        assert status["completionTime"] == "2026-01-01T00:00:00Z"
        # a finished launcher: the StatefulSet is not read (v0.2.3), Worker counts nothing
        assert status["replicaStatuses"] == {"Launcher": {"succeeded": 1}, "Worker": {}}
        h.mark()
        await h.sync(NAME)
        assert h.writes() == [("update", "statefulsets", NS, f"{NAME}-worker")]
        assert workers(h) == 0
        assert h.job(NAME)["status"]["replicaStatuses"] == {"Launcher": {"succeeded": 1},
                                                            "Worker": {}}


async def test_a_failed_launcher_job_fails_the_job() -> None:
    async with EngineHarness() as h:
        h.create(benchmarks_job())
        await h.sync(NAME)
        set_status(h, JOBS, f"{NAME}-launcher", {
            "failed": 7, "conditions": [{"type": "Failed", "status": "True"}]})
        await h.sync(NAME)
        assert conditions(h)[-1] == ("Failed", "True", "MPIJobFailed",
                                     f"MPIJob {NS}/{NAME} has failed")
        assert h.events() == [("Warning", "MPIJobFailed", f"MPIJob {NS}/{NAME} has failed")]


async def test_an_invalid_v1alpha2_job_gets_a_validation_event_and_nothing_else() -> None:
    job = benchmarks_job()
    del job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    async with EngineHarness() as h:
        h.create(job)
        h.mark()
        await h.sync(NAME)
        assert h.writes() == []
        [(kind, reason, message)] = h.events()
        assert (kind, reason) == ("Warning", "ValidationError")
        assert message == ("Found validation errors: spec.mpiReplicaSpecs[Worker].template.spec"
                           ".containers: Required value: must define at least one container")
