"""The elastic job's HPA (training-operator v1.9 hpa.go) and the PyTorchJob status rules
(``PyTorchJobReconciler.UpdateJobStatus``), as pure functions."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.pytorch import (
    desired_hpa,
    hpa_changed,
    parse_pytorchjob,
    set_defaults,
    update_pytorchjob_status,
)
from tests.pytorchjobs import CPU_METRIC, pytorchjob, replica, selector

NOW = datetime(2026, 1, 1, tzinfo=UTC)
OWNER = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "el", "uid": "u",
         "controller": True, "blockOwnerDeletion": True}


def elastic(**policy: Any) -> dict[str, Any]:
    job = set_defaults(pytorchjob("el", {"Worker": replica(2)}, elastic=policy))
    job["metadata"]["namespace"] = "ns"
    return job


def test_the_hpa_targets_the_jobs_scale_subresource() -> None:
    hpa = desired_hpa(elastic(minReplicas=1, maxReplicas=3, metrics=[CPU_METRIC]), OWNER)
    assert hpa == {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "el", "namespace": "ns", "ownerReferences": [OWNER]},
        "spec": {"scaleTargetRef": {"kind": "PyTorchJob", "name": "el",
                                    "apiVersion": "kubeflow.org/v1"},
                 "minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_METRIC]}}


def test_no_metrics_no_hpa_and_defaults_fill_min_and_max() -> None:
    assert desired_hpa(elastic(minReplicas=1), OWNER) is None
    assert desired_hpa(set_defaults(pytorchjob("el", {"Worker": replica(2)})), OWNER) is None
    hpa = desired_hpa(elastic(metrics=[CPU_METRIC]), OWNER)
    assert hpa is not None
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 2)
    empty = desired_hpa(elastic(metrics=[]), OWNER)
    assert empty is not None
    assert "metrics" not in empty["spec"]


def test_the_change_check_reads_quantities_by_value() -> None:
    metric = {"type": "Pods", "pods": {"metric": {"name": "qps"},
                                       "target": {"type": "AverageValue",
                                                  "averageValue": "1000m"}}}
    desired = desired_hpa(elastic(metrics=[metric]), OWNER)
    assert desired is not None
    stored = copy.deepcopy(desired)
    stored["spec"]["metrics"][0]["pods"]["target"]["averageValue"] = "1"
    stored["status"] = {"currentReplicas": 2}
    assert not hpa_changed(stored, desired)
    stored["spec"]["maxReplicas"] = 9
    assert hpa_changed(stored, desired)
    stored = copy.deepcopy(desired)
    stored["spec"]["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": 1}}
    assert hpa_changed(stored, desired)


def counts(**by_type: dict[str, int]) -> dict[str, Any]:
    return {"replicaStatuses": {k: dict(v) for k, v in by_type.items()}}


def run(body: dict[str, Any], status: dict[str, Any],
        pods: list[dict[str, Any]] | None = None) -> list[Event]:
    job = set_defaults(body)
    job["metadata"]["namespace"] = "ns"
    return update_pytorchjob_status(parse_pytorchjob(job), status, pods=pods or [], now=NOW)


def kinds(status: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"])
            for c in status.get("conditions", [])]


MASTER_JOB = pytorchjob("pt", {"Master": replica(1), "Worker": replica(2)})


def test_every_replica_status_gets_its_selector() -> None:
    status = counts(Master={}, Worker={"active": 1})
    run(MASTER_JOB, status)
    assert status["replicaStatuses"] == {
        "Master": {"selector": selector("pt", "Master")},
        "Worker": {"active": 1, "selector": selector("pt", "Worker")}}


def test_the_master_decides_running_and_success_without_the_namespace() -> None:
    status = counts(Master={"active": 1}, Worker={"active": 2})
    assert run(MASTER_JOB, status) == []
    assert kinds(status) == [("Running", "True", "PyTorchJobRunning",
                              "PyTorchJob pt is running.")]
    status["replicaStatuses"] = {"Master": {"succeeded": 1}, "Worker": {"failed": 2}}
    message = "PyTorchJob pt is successfully completed."
    assert run(MASTER_JOB, status) == [Event(NORMAL, "PyTorchJobSucceeded", message)]
    assert kinds(status) == [("Running", "False", "PyTorchJobRunning",
                              "PyTorchJob pt is running."),
                             ("Succeeded", "True", "PyTorchJobSucceeded", message)]
    assert status["completionTime"] == "2026-01-01T00:00:00Z"


def test_workers_alone_decide_with_the_namespace() -> None:
    body = pytorchjob("pt", {"Worker": replica(2)})
    status = counts(Worker={"active": 2})
    run(body, status)
    assert kinds(status) == [("Running", "True", "PyTorchJobRunning",
                              "PyTorchJob ns/pt is running.")]
    status["replicaStatuses"] = {"Worker": {"active": 1, "succeeded": 1}}
    assert run(body, status) == []
    status["replicaStatuses"] = {"Worker": {"succeeded": 2}}
    message = "PyTorchJob ns/pt successfully completed."
    assert run(body, status) == [Event(NORMAL, "PyTorchJobSucceeded", message)]
    assert kinds(status)[-1] == ("Succeeded", "True", "PyTorchJobSucceeded", message)


def test_an_elastic_job_succeeds_when_any_worker_has() -> None:
    body = pytorchjob("pt", {"Worker": replica(3)}, elastic={"minReplicas": 1})
    status = counts(Worker={"active": 2, "succeeded": 1})
    run(body, status)
    assert kinds(status)[-1][:3] == ("Succeeded", "True", "PyTorchJobSucceeded")


def failed_pod(rtype: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"pt-{rtype}-0", "labels": {
        "training.kubeflow.org/replica-type": rtype}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"phase": "Failed"}}


@pytest.mark.parametrize("restart", ["OnFailure", "Always", "ExitCode"])
def test_a_failed_replica_restarts_unless_never(restart: str) -> None:
    body = pytorchjob("pt", {"Master": replica(1), "Worker": replica(2, restart=restart)})
    status = counts(Master={"active": 1}, Worker={"active": 1, "failed": 1})
    message = "PyTorchJob pt is restarting because 1 Worker replica(s) failed."
    assert run(body, status, [failed_pod("worker")]) == [
        Event(WARNING, "PyTorchJobRestarting", message)]
    assert kinds(status)[-1] == ("Restarting", "True", "PyTorchJobRestarting", message)
    assert "completionTime" not in status
    again = counts(Master={"active": 1}, Worker={"active": 1, "failed": 1})
    assert run(body, again, [failed_pod("worker", deleting=True)]) == []


def test_never_fails_the_job() -> None:
    body = pytorchjob("pt", {"Master": replica(1, restart="Never"), "Worker": replica(1)})
    status = counts(Master={"failed": 1}, Worker={"active": 1})
    message = "PyTorchJob pt is failed because 1 Master replica(s) failed."
    assert run(body, status, [failed_pod("master")]) == [
        Event(NORMAL, "PyTorchJobFailed", message)]
    assert kinds(status)[-1] == ("Failed", "True", "PyTorchJobFailed", message)
    assert status["completionTime"] == "2026-01-01T00:00:00Z"


def test_enough_succeeded_and_running_replicas_hide_failures() -> None:
    body = pytorchjob("pt", {"Worker": replica(2, restart="Never")})
    status = counts(Worker={"active": 2, "failed": 1})
    run(body, status)
    assert [k[0] for k in kinds(status)] == ["Running"]
