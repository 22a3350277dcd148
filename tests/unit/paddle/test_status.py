"""The PaddleJob status rules (training-operator v1.9 PaddleJobReconciler.UpdateJobStatus):
each branch's conditions, messages, events and completionTime."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mpi_controller.kube.events import Event
from mpi_controller.paddle import parse_paddlejob, set_defaults, update_paddlejob_status
from tests.unit.paddle.jobs import paddlejob, replica, selector

NOW = datetime(2026, 1, 1, 0, 0, 5, tzinfo=UTC)
STAMP = "2026-01-01T00:00:05Z"
CREATED = {"type": "Created", "status": "True", "reason": "PaddleJobCreated",
           "message": "PaddleJob j is created.", "lastUpdateTime": "2026-01-01T00:00:00Z",
           "lastTransitionTime": "2026-01-01T00:00:00Z"}


def ps_job(*, master: int = 1, workers: int = 2, restart: str = "OnFailure",
           **spec: Any) -> Any:
    job = paddlejob("j", {"Master": replica(master, restart=restart),
                          "Worker": replica(workers, restart=restart)}, **spec)
    job["metadata"]["namespace"] = "ns"
    return parse_paddlejob(set_defaults(job))


def collective_job(*, workers: int = 2, restart: str = "OnFailure", **spec: Any) -> Any:
    job = paddlejob("j", {"Worker": replica(workers, restart=restart)}, **spec)
    job["metadata"]["namespace"] = "ns"
    return parse_paddlejob(set_defaults(job))


def status(**counts: dict[str, int]) -> dict[str, Any]:
    return {"conditions": [dict(CREATED)], "startTime": "2026-01-01T00:00:00Z",
            "replicaStatuses": {rtype: dict(c) for rtype, c in counts.items()}}


def failed_pod(rtype: str, index: int, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"j-{rtype}-{index}", "labels": {
        "training.kubeflow.org/replica-type": rtype, "training.kubeflow.org/replica-index":
        str(index)}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:04Z"
    return {"metadata": meta, "status": {"phase": "Failed"}}


def cond(ctype: str, why: str, message: str, state: str = "True") -> dict[str, Any]:
    return {"type": ctype, "status": state, "lastUpdateTime": STAMP,
            "lastTransitionTime": STAMP, "reason": why, "message": message}


def test_selectors_are_set_for_every_replica_type() -> None:
    """status.Selector = FormatLabelSelector(GenLabelSelector(job, rtype)) for each type, even
    one whose replica status was missing; nothing else changes while pods are pending."""
    st: dict[str, Any] = {"conditions": [dict(CREATED)], "replicaStatuses": {"Master": {}}}
    assert update_paddlejob_status(ps_job(), st, pods=[], now=NOW) == []
    assert st == {"conditions": [CREATED], "replicaStatuses": {
        "Master": {"selector": selector("j", "Master")},
        "Worker": {"selector": selector("j", "Worker")}}}
    assert selector("j", "Worker") == (
        "group-name=kubeflow.org,job-name=j,training.kubeflow.org/job-name=j,"
        "training.kubeflow.org/operator-name=paddlejob-controller,"
        "training.kubeflow.org/replica-type=worker")


def test_ps_mode_an_active_master_makes_the_job_running() -> None:
    """With a Master: running > 0 gives Running, "PaddleJob <name> is running." (no namespace)."""
    st = status(Master={"active": 1}, Worker={"active": 2})
    assert update_paddlejob_status(ps_job(), st, pods=[], now=NOW) == []
    assert st["conditions"] == [CREATED, cond("Running", "PaddleJobRunning",
                                              "PaddleJob j is running.")]
    assert "completionTime" not in st


def test_ps_mode_workers_alone_neither_run_nor_finish_the_job() -> None:
    """With a Master only the Master decides: running or succeeded workers change nothing."""
    st = status(Master={}, Worker={"succeeded": 2})
    assert update_paddlejob_status(ps_job(), st, pods=[], now=NOW) == []
    assert st["conditions"] == [CREATED]
    st = status(Master={}, Worker={"active": 2})
    assert update_paddlejob_status(ps_job(), st, pods=[], now=NOW) == []
    assert st["conditions"] == [CREATED]


def test_ps_mode_the_masters_success_ends_the_job_and_the_rules() -> None:
    """expected == 0 for the Master: Succeeded "PaddleJob <name> is successfully completed.",
    a Normal PaddleJobSucceeded event, completionTime; the rules return there, so a failed
    worker (Never) is not looked at."""
    st = status(Master={"succeeded": 1}, Worker={"active": 1, "failed": 1})
    st["conditions"].append(cond("Running", "PaddleJobRunning", "PaddleJob j is running."))
    events = update_paddlejob_status(ps_job(restart="Never"), st,
                                     pods=[failed_pod("worker", 1)], now=NOW)
    message = "PaddleJob j is successfully completed."
    assert events == [Event("Normal", "PaddleJobSucceeded", message)]
    assert st["conditions"] == [
        CREATED, cond("Running", "PaddleJobRunning", "PaddleJob j is running.", "False"),
        cond("Succeeded", "PaddleJobSucceeded", message)]
    assert st["completionTime"] == STAMP


def test_ps_mode_two_masters_need_both() -> None:
    """expected = replicas - succeeded: one of two masters succeeded is not success."""
    st = status(Master={"succeeded": 1, "active": 1}, Worker={"active": 2})
    assert update_paddlejob_status(ps_job(master=2), st, pods=[], now=NOW) == []
    assert [c["type"] for c in st["conditions"]] == ["Created", "Running"]


def test_collective_mode_running_names_the_namespace() -> None:
    """Without a Master the Worker decides: running > 0 gives "PaddleJob <ns>/<name> is
    running."."""
    st = status(Worker={"active": 1})
    assert update_paddlejob_status(collective_job(), st, pods=[], now=NOW) == []
    assert st["conditions"] == [CREATED, cond("Running", "PaddleJobRunning",
                                              "PaddleJob ns/j is running.")]


def test_collective_mode_every_worker_must_succeed() -> None:
    """expected == 0: "PaddleJob <ns>/<name> successfully completed." with its event and
    completionTime."""
    st = status(Worker={"succeeded": 2})
    events = update_paddlejob_status(collective_job(), st, pods=[], now=NOW)
    message = "PaddleJob ns/j successfully completed."
    assert events == [Event("Normal", "PaddleJobSucceeded", message)]
    assert st["conditions"] == [CREATED, cond("Succeeded", "PaddleJobSucceeded", message)]
    assert st["completionTime"] == STAMP


def test_an_elastic_job_has_no_early_success() -> None:
    """Unlike PyTorchJob, one succeeded worker of an elastic PaddleJob does not end it."""
    st = status(Worker={"succeeded": 1})
    job = collective_job(elastic={"minReplicas": 1, "maxReplicas": 2})
    assert update_paddlejob_status(job, st, pods=[], now=NOW) == []
    assert st["conditions"] == [CREATED]
    assert "completionTime" not in st


def test_a_failure_restarts_unless_the_policy_is_never() -> None:
    """failed > 0 and replicas > succeeded + running with OnFailure: Restarting "PaddleJob
    <name> is restarting because <n> <type> replica(s) failed." (replacing Running) and a
    Warning PaddleJobRestarting event for the Failed pod not yet deleted."""
    st = status(Worker={"active": 1, "failed": 1})
    st["conditions"].append(cond("Running", "PaddleJobRunning", "PaddleJob ns/j is running."))
    events = update_paddlejob_status(collective_job(), st, pods=[failed_pod("worker", 1)],
                                     now=NOW)
    message = "PaddleJob j is restarting because 1 Worker replica(s) failed."
    assert events == [Event("Warning", "PaddleJobRestarting", message)]
    assert st["conditions"] == [CREATED, cond("Restarting", "PaddleJobRestarting", message)]
    assert "completionTime" not in st


def test_a_failure_being_acted_on_records_no_second_event() -> None:
    """The Restarting condition stays while the failed pod is being deleted; no new event."""
    message = "PaddleJob j is restarting because 1 Worker replica(s) failed."
    st = status(Worker={"active": 1, "failed": 1})
    st["conditions"].append(cond("Restarting", "PaddleJobRestarting", message))
    events = update_paddlejob_status(collective_job(), st,
                                     pods=[failed_pod("worker", 1, deleting=True)], now=NOW)
    assert events == []
    assert st["conditions"] == [CREATED, cond("Restarting", "PaddleJobRestarting", message)]


def test_exit_code_and_always_also_restart() -> None:
    """Any restart policy but Never gives Restarting (ExitCode and Always included)."""
    for policy in ("ExitCode", "Always"):
        st = status(Master={"failed": 1}, Worker={"active": 2})
        events = update_paddlejob_status(ps_job(restart=policy), st,
                                         pods=[failed_pod("master", 0)], now=NOW)
        message = "PaddleJob j is restarting because 1 Master replica(s) failed."
        assert events == [Event("Warning", "PaddleJobRestarting", message)], policy
        assert st["conditions"][-1] == cond("Restarting", "PaddleJobRestarting", message)


def test_never_fails_the_job() -> None:
    """restartPolicy Never: Failed "PaddleJob <name> is failed because <n> <type> replica(s)
    failed.", a Normal PaddleJobFailed event, completionTime; Running turns False."""
    st = status(Worker={"active": 1, "failed": 1})
    st["conditions"].append(cond("Running", "PaddleJobRunning", "PaddleJob ns/j is running."))
    events = update_paddlejob_status(collective_job(restart="Never"), st,
                                     pods=[failed_pod("worker", 1)], now=NOW)
    message = "PaddleJob j is failed because 1 Worker replica(s) failed."
    assert events == [Event("Normal", "PaddleJobFailed", message)]
    assert st["conditions"] == [
        CREATED, cond("Running", "PaddleJobRunning", "PaddleJob ns/j is running.", "False"),
        cond("Failed", "PaddleJobFailed", message)]
    assert st["completionTime"] == STAMP


def test_a_failed_master_fails_a_ps_job() -> None:
    """The failure rule applies to the Master too: Never fails the job naming Master."""
    st = status(Master={"failed": 1}, Worker={"active": 2})
    events = update_paddlejob_status(ps_job(restart="Never"), st, pods=[], now=NOW)
    message = "PaddleJob j is failed because 1 Master replica(s) failed."
    assert events == [Event("Normal", "PaddleJobFailed", message)]
    assert st["conditions"] == [CREATED, cond("Failed", "PaddleJobFailed", message)]


def test_failures_covered_by_succeeded_and_running_pods_are_ignored() -> None:
    """failed > 0 but replicas <= succeeded + running (a replaced pod counted twice): no
    condition, no event."""
    st = status(Worker={"active": 1, "succeeded": 1, "failed": 1})
    assert update_paddlejob_status(collective_job(restart="Never"), st, pods=[],
                                   now=NOW) == []
    assert [c["type"] for c in st["conditions"]] == ["Created", "Running"]


def test_a_succeeded_and_a_failed_worker_fail_the_job_without_success() -> None:
    """expected 1 (no success) and failed 1 with replicas 2 > 1 + 0: Failed under Never."""
    st = status(Worker={"succeeded": 1, "failed": 1})
    events = update_paddlejob_status(collective_job(restart="Never"), st, pods=[], now=NOW)
    assert [e.reason for e in events] == ["PaddleJobFailed"]
    assert [c["type"] for c in st["conditions"]] == ["Created", "Failed"]
