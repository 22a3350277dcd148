"""The TFJob status rules (training-operator v1.9 TFJobReconciler.UpdateJobStatus)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mpi_controller.kube.events import Event
from mpi_controller.tensorflow import parse_tfjob, set_defaults, update_tfjob_status
from mpi_controller.tensorflow.status import worker0_completed
from tests.tfjobs import replica, tfjob

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def job(**spec: Any) -> Any:
    replicas = spec.pop("replicas")
    body = tfjob("j", replicas, **spec)
    body["metadata"]["namespace"] = "n"
    return parse_tfjob(set_defaults(body))


def worker0(phase: str, code: int | None) -> dict[str, Any]:
    state = {"terminated": {"exitCode": code}} if code is not None else {"running": {}}
    return {"metadata": {"name": "j-worker-0", "labels": {
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "0"}},
        "status": {"phase": phase, "containerStatuses": [
            {"name": "tensorflow", "state": state}]}}


def run(view: Any, counts: dict[str, dict[str, int]], pods: list[dict[str, Any]] | None = None,
        conditions: list[dict[str, Any]] | None = None,
        ) -> tuple[list[tuple[str, str, str]], list[Event], dict[str, Any]]:
    status: dict[str, Any] = {"replicaStatuses": counts}
    if conditions:
        status["conditions"] = conditions
    events = update_tfjob_status(view, status, pods=pods or [], now=NOW)
    return ([(c["type"], c["status"], c["reason"]) for c in status.get("conditions", [])],
            events, status)


SUCCEEDED = Event("Normal", "TFJobSucceeded", "TFJob n/j successfully completed.")


def test_worker_decides_running_then_success_by_worker_0() -> None:
    view = job(replicas={"PS": replica(1), "Worker": replica(2)})
    assert run(view, {"PS": {"active": 1}, "Worker": {"active": 2}})[:2] == (
        [("Running", "True", "TFJobRunning")], [])
    conds, events, status = run(view, {"PS": {"active": 1},
                                       "Worker": {"active": 1, "succeeded": 1}},
                                [worker0("Succeeded", 0)])
    assert conds == [("Succeeded", "True", "TFJobSucceeded")]
    assert events == [SUCCEEDED]
    assert status["completionTime"] == "2026-01-01T00:00:00Z"


def test_worker_0_must_exit_zero_and_all_workers_policy_waits() -> None:
    view = job(replicas={"Worker": replica(2)})
    assert not worker0_completed(view, [worker0("Succeeded", None)])
    assert not worker0_completed(view, [worker0("Running", None)])
    assert worker0_completed(view, [worker0("Succeeded", 0)])
    every = job(replicas={"Worker": replica(2)}, successPolicy="AllWorkers")
    assert run(every, {"Worker": {"active": 1, "succeeded": 1}},
               [worker0("Succeeded", 0)])[0] == [("Running", "True", "TFJobRunning")]
    assert run(every, {"Worker": {"succeeded": 2}})[0] == [
        ("Succeeded", "True", "TFJobSucceeded")]


def test_the_chief_decides_and_failures_elsewhere_still_fail() -> None:
    view = job(replicas={"Chief": replica(1), "Worker": replica(2), "PS": replica(1)})
    assert run(view, {"Chief": {"active": 1}, "Worker": {"succeeded": 2}, "PS": {}})[0] == [
        ("Running", "True", "TFJobRunning")]
    assert run(view, {"Chief": {"succeeded": 1}, "Worker": {"active": 2}, "PS": {}})[0] == [
        ("Succeeded", "True", "TFJobSucceeded")]
    conds, events, status = run(view, {"Chief": {"active": 1}, "Worker": {"active": 2},
                                       "PS": {"failed": 1}})
    assert conds == [("Running", "False", "TFJobRunning"), ("Failed", "True", "TFJobFailed")]
    assert events == [Event("Normal", "TFJobFailed",
                            "TFJob n/j has failed because 1 PS replica(s) failed.")]
    assert status["conditions"][-1]["message"] == events[0].message


def test_a_restarting_job_stays_restarting() -> None:
    view = job(replicas={"Worker": replica(2, restart="OnFailure")})
    restarting = [{"type": "Restarting", "status": "True", "reason": "TFJobRestarting",
                   "message": "m", "lastTransitionTime": "x"}]
    conds, events, _ = run(view, {"Worker": {"active": 1, "failed": 1}},
                           conditions=restarting)
    assert conds == [("Restarting", "True", "TFJobRestarting")]
    assert events == []


def test_dynamic_workers_tolerate_worker_failures_but_not_ps_ones() -> None:
    view = job(replicas={"PS": replica(1), "Worker": replica(2)}, enableDynamicWorker=True)
    assert run(view, {"PS": {"active": 1}, "Worker": {"active": 1, "failed": 1}})[0] == [
        ("Running", "True", "TFJobRunning")]
    assert run(view, {"PS": {"failed": 1}, "Worker": {"active": 2}})[0][-1] == (
        "Failed", "True", "TFJobFailed")


def test_an_evaluator_alone_decides_nothing() -> None:
    view = job(replicas={"Evaluator": replica(1), "Chief": replica(1)})
    assert run(view, {"Evaluator": {"succeeded": 1}, "Chief": {}})[0] == []
