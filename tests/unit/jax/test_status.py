"""The JAXJob status rules (training-operator v1.9 ``JAXJobReconciler.UpdateJobStatus``): each
branch with its exact conditions, messages, events, ``completionTime`` and the replica
selector."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mpi_controller.jax import parse_jaxjob, set_defaults, update_jaxjob_status
from mpi_controller.jax.v1 import JAXJob
from mpi_controller.kube.events import Event
from tests.unit.jax.jaxjobs import jaxjob, replica, selector

NOW = datetime(2026, 1, 1, tzinfo=UTC)
EARLIER = "2025-12-31T00:00:00Z"
RUNNING = ("Running", "True", "JAXJobRunning")


def job(workers: int = 2, restart: str = "Never", **extra: dict[str, Any]) -> JAXJob:
    body = jaxjob("j", {"Worker": replica(workers, restart=restart), **extra})
    body["metadata"]["namespace"] = "n"
    return parse_jaxjob(set_defaults(body))


def worker(index: int, phase: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"j-worker-{index}", "labels": {
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": str(index)}}
    if deleting:
        meta["deletionTimestamp"] = EARLIER
    return {"metadata": meta, "status": {"phase": phase}}


def run(view: JAXJob, counts: dict[str, dict[str, int]], *,
        pods: list[dict[str, Any]] | None = None,
        conditions: list[dict[str, Any]] | None = None, **status: Any,
        ) -> tuple[list[tuple[str, str, str]], list[Event], dict[str, Any]]:
    out: dict[str, Any] = {"replicaStatuses": counts, **status}
    if conditions:
        out["conditions"] = conditions
    events = update_jaxjob_status(view, out, pods=pods or [], now=NOW)
    return ([(c["type"], c["status"], c["reason"]) for c in out.get("conditions", [])],
            events, out)


def message(status: dict[str, Any]) -> str:
    text: str = status["conditions"][-1]["message"]
    return text


def condition(kind: str, status: str, reason: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": "m",
            "lastUpdateTime": EARLIER, "lastTransitionTime": EARLIER}


def test_active_workers_make_it_running() -> None:
    """``running > 0`` with workers still expected: Running, ``JAXJob <ns>/<name> is
    running.``, no event, no completionTime; the selector of the scale subresource is set."""
    conds, events, status = run(job(), {"Worker": {"active": 1}})
    assert conds == [RUNNING]
    assert message(status) == "JAXJob n/j is running."
    assert events == []
    assert "completionTime" not in status
    assert status["replicaStatuses"] == {"Worker": {"active": 1, "selector": selector("j")}}


def test_no_active_worker_and_none_failed_changes_nothing_but_the_selector() -> None:
    conds, events, status = run(job(), {})
    assert (conds, events) == ([], [])
    assert status == {"replicaStatuses": {"Worker": {"selector": selector("j")}}}


def test_every_worker_succeeded_makes_it_succeed() -> None:
    """``expected == 0``: Succeeded (``JAXJob <ns>/<name> successfully completed.``), a Normal
    JAXJobSucceeded event, completionTime; Running turns False."""
    conds, events, status = run(job(), {"Worker": {"succeeded": 2}},
                                conditions=[condition("Running", "True", "JAXJobRunning")])
    assert conds == [("Running", "False", "JAXJobRunning"),
                     ("Succeeded", "True", "JAXJobSucceeded")]
    assert message(status) == "JAXJob n/j successfully completed."
    assert events == [Event("Normal", "JAXJobSucceeded", "JAXJob n/j successfully completed.")]
    assert status["completionTime"] == "2026-01-01T00:00:00Z"


def test_worker_0_alone_does_not_decide() -> None:
    """Unlike TFJob, worker 0 finishing is not enough: one of two succeeded, the other runs."""
    conds, events, _ = run(job(), {"Worker": {"active": 1, "succeeded": 1}},
                           pods=[worker(0, "Succeeded"), worker(1, "Running")])
    assert (conds, events) == ([RUNNING], [])


def test_a_completion_time_already_set_is_kept() -> None:
    _, _, status = run(job(1), {"Worker": {"succeeded": 1}}, completionTime=EARLIER)
    assert status["completionTime"] == EARLIER


def test_a_failed_worker_under_never_fails_the_job() -> None:
    """restartPolicy Never, ``failed > 0`` and ``replicas > succeeded + running``: Failed with
    ``JAXJob <name> is failed because <n> Worker replica(s) failed.`` (no namespace), a Normal
    JAXJobFailed event, completionTime; the running one made it Running first."""
    conds, events, status = run(job(3), {"Worker": {"active": 1, "failed": 2}},
                                pods=[worker(0, "Running"), worker(1, "Failed"),
                                      worker(2, "Failed")])
    text = "JAXJob j is failed because 2 Worker replica(s) failed."
    assert conds == [("Running", "False", "JAXJobRunning"), ("Failed", "True", "JAXJobFailed")]
    assert message(status) == text
    assert events == [Event("Normal", "JAXJobFailed", text)]
    assert status["completionTime"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize("restart", ["OnFailure", "Always", "ExitCode"])
def test_a_failed_worker_under_any_other_policy_restarts(restart: str) -> None:
    """Any restart policy but Never: Restarting (``JAXJob <name> is restarting because <n>
    Worker replica(s) failed.``) with a Warning JAXJobRestarting event; it replaces the Running
    condition the active worker set just before; no completionTime."""
    conds, events, status = run(job(2, restart), {"Worker": {"active": 1, "failed": 1}},
                                pods=[worker(0, "Running"), worker(1, "Failed")])
    text = "JAXJob j is restarting because 1 Worker replica(s) failed."
    assert conds == [("Restarting", "True", "JAXJobRestarting")]
    assert message(status) == text
    assert events == [Event("Warning", "JAXJobRestarting", text)]
    assert "completionTime" not in status


def test_a_failure_already_acted_on_is_not_reported_again() -> None:
    """The failed pod is being deleted (the restart is under way): the condition holds, the
    Warning event is not repeated (ours: once per failure, where upstream repeats it on
    every reconcile until the pod is gone)."""
    conds, events, _ = run(job(1, "OnFailure"), {"Worker": {"failed": 1}},
                           pods=[worker(0, "Failed", deleting=True)])
    assert conds == [("Restarting", "True", "JAXJobRestarting")]
    assert events == []


def test_failures_with_every_replica_accounted_for_are_ignored() -> None:
    """``replicas <= succeeded + running``: a failed count beside enough active and succeeded
    workers (a restarted worker's old count) neither restarts nor fails the job."""
    conds, events, _ = run(job(2), {"Worker": {"active": 1, "succeeded": 1, "failed": 1}})
    assert (conds, events) == ([RUNNING], [])


def test_a_failed_job_keeps_its_conditions() -> None:
    """UpdateJobConditions is a no-op once Failed: the rules' events are still returned."""
    failed = condition("Failed", "True", "JAXJobFailed")
    conds, events, _ = run(job(1), {"Worker": {"failed": 1}}, conditions=[failed],
                           pods=[worker(0, "Failed")])
    assert conds == [("Failed", "True", "JAXJobFailed")]
    assert events == [Event("Normal", "JAXJobFailed",
                            "JAXJob j is failed because 1 Worker replica(s) failed.")]


def test_another_type_gets_a_selector_and_failure_rules_only() -> None:
    """A type other than Worker (refused by validation; the rules still visit every type):
    it never makes the job Running or Succeeded, but its failures count."""
    view = job(1, Other=replica(1))
    conds, events, status = run(view, {"Other": {"active": 1}})
    assert (conds, events) == ([], [])
    assert status["replicaStatuses"]["Other"] == {"active": 1, "selector": selector("j",
                                                                                     "Other")}
    conds, events, _ = run(view, {"Worker": {"active": 1}, "Other": {"failed": 1}})
    assert conds == [("Running", "False", "JAXJobRunning"), ("Failed", "True", "JAXJobFailed")]
    assert events == [Event("Normal", "JAXJobFailed",
                            "JAXJob j is failed because 1 Other replica(s) failed.")]
