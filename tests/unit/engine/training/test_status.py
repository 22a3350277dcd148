"""The status rules the kinds share (``engine/training/status.py``), on a status dict: counts,
the Master's and the Worker's rules, restart or fail, and the rule set of PyTorchJob,
PaddleJob and JAXJob (their own tests prove each kind's messages through them)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob
from mpi_controller.engine.training.status import ReplicaCounts, StatusRules, master_or_workers
from mpi_controller.kube.events import NORMAL, WARNING, Event

NOW = datetime(2026, 1, 1, tzinfo=UTC)
STAMP = "2026-01-01T00:00:00Z"


def job(**replicas: tuple[int, str]) -> TrainingJob:
    return TrainingJob(name="j", namespace="ns", replica_specs={
        rtype: ReplicaSpec(rtype, n, policy) for rtype, (n, policy) in replicas.items()})


def rules(view: TrainingJob, counts: dict[str, Any], pods: list[Any] | None = None,
          ) -> StatusRules:
    return StatusRules("SomeJob", view, {"replicaStatuses": counts}, pods=pods or [], now=NOW)


def conditions(r: StatusRules) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"])
            for c in r.status.get("conditions", [])]


def failed_pod(rtype: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": {"training.kubeflow.org/replica-type": rtype.lower()}}
    if deleting:
        meta["deletionTimestamp"] = STAMP
    return {"metadata": meta, "status": {"phase": "Failed"}}


def test_counts_read_numbers_only() -> None:
    r = rules(job(), {"Worker": {"succeeded": 2, "active": True, "failed": "1"}})
    assert r.counts("Worker") == ReplicaCounts(succeeded=2)
    assert r.counts("Master") == ReplicaCounts()


def test_selectors_for_every_replica_type() -> None:
    r = rules(job(Worker=(2, "Never")), {"Worker": "bad"})
    r.set_selectors("somejob-controller")
    assert r.status["replicaStatuses"] == {"Worker": {"selector": (
        "group-name=kubeflow.org,job-name=j,training.kubeflow.org/job-name=j,"
        "training.kubeflow.org/operator-name=somejob-controller,"
        "training.kubeflow.org/replica-type=worker")}}


def test_the_master_decides_and_stops_the_rules() -> None:
    view = job(Master=(1, "OnFailure"), Worker=(2, "Never"))
    r = rules(view, {"Master": {"succeeded": 1}, "Worker": {"failed": 2}})
    assert master_or_workers(r, ["Master", "Worker"], master_type="Master",
                             worker_type="Worker") == [
        Event(NORMAL, "SomeJobSucceeded", "SomeJob j is successfully completed.")]
    assert conditions(r) == [("Succeeded", "True", "SomeJobSucceeded",
                              "SomeJob j is successfully completed.")]
    assert r.status["completionTime"] == STAMP


def test_without_a_master_the_workers_decide() -> None:
    r = rules(job(Worker=(2, "Never")), {"Worker": {"active": 1, "succeeded": 1}})
    assert master_or_workers(r, ["Worker"], master_type="Master", worker_type="Worker") == []
    assert conditions(r) == [("Running", "True", "SomeJobRunning", "SomeJob ns/j is running.")]
    r = rules(job(Worker=(2, "Never")), {"Worker": {"active": 1, "succeeded": 1}})
    master_or_workers(r, ["Worker"], master_type=None, worker_type="Worker",
                      any_worker_done=True)
    assert conditions(r)[-1] == ("Succeeded", "True", "SomeJobSucceeded",
                                 "SomeJob ns/j successfully completed.")


def test_a_failure_restarts_once_per_new_failure_or_fails() -> None:
    pods = [failed_pod("Worker")]
    r = rules(job(Worker=(2, "OnFailure")), {"Worker": {"failed": 1, "active": 0}}, pods)
    master_or_workers(r, ["Worker"], master_type=None, worker_type="Worker")
    message = "SomeJob j is restarting because 1 Worker replica(s) failed."
    assert r.events == [Event(WARNING, "SomeJobRestarting", message)]
    assert conditions(r) == [("Restarting", "True", "SomeJobRestarting", message)]
    r = rules(job(Worker=(2, "OnFailure")), {"Worker": {"failed": 1}},
              [failed_pod("Worker", deleting=True)])
    master_or_workers(r, ["Worker"], master_type=None, worker_type="Worker")
    assert r.events == []
    r = rules(job(Worker=(2, "Never")), {"Worker": {"failed": 1}})
    master_or_workers(r, ["Worker"], master_type=None, worker_type="Worker")
    assert r.events == [Event(NORMAL, "SomeJobFailed",
                              "SomeJob j is failed because 1 Worker replica(s) failed.")]


def test_failures_count_only_while_replicas_are_missing() -> None:
    r = rules(job(Worker=(2, "Never")), {"Worker": {"failed": 1, "active": 2}})
    master_or_workers(r, ["Worker"], master_type=None, worker_type="Worker")
    assert r.events == []
