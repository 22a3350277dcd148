"""Status through a job's whole life, suspension and later syncs included (mpi-operator v0.8.2
``pkg/controller/mpi_job_controller.go``: ``updateMPIJobStatus``, ``updateMPIJobFailedStatus``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mpi_controller.mpi.events import Event
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.status import (
    StatusUpdate,
    clean_up_worker_status,
    mark_created,
    mark_started,
    update_mpi_job_status,
)
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import NOW, NOW_TEXT, pi_job

LAUNCHER_UID = "L-UID"


def _launcher(job: dict[str, Any], **status: Any) -> dict[str, Any]:
    launcher = new_launcher_job(job)
    launcher["metadata"]["uid"] = LAUNCHER_UID
    launcher["spec"]["selector"] = {
        "matchLabels": {"batch.kubernetes.io/controller-uid": LAUNCHER_UID}
    }
    launcher["status"] = status
    return launcher


def _launcher_pod(
    phase: str,
    *,
    created: str = "2024-05-01T11:00:00Z",
    reason: str = "",
    message: str = "",
    owner: str = LAUNCHER_UID,
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"pi-launcher-{created[-9:-1].replace(':', '')}",
            "creationTimestamp": created,
            "labels": {"batch.kubernetes.io/controller-uid": LAUNCHER_UID},
            "ownerReferences": [{"kind": "Job", "uid": owner, "controller": True}],
        },
        "status": {"phase": phase, "reason": reason, "message": message},
    }


def _workers(job: dict[str, Any], *phases: str, reason: str = "") -> list[dict[str, Any]]:
    pods = []
    for i, phase in enumerate(phases):
        pod = new_worker(job, i)
        pod["status"] = {"phase": phase, "reason": reason}
        pods.append(pod)
    return pods


def _with_status(job: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**job, "status": status}


def _conds(update: StatusUpdate | dict[str, Any]) -> list[tuple[str, str, str, str]]:
    status = update.status if isinstance(update, StatusUpdate) else update
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]]


def _cond(update: StatusUpdate, kind: str) -> tuple[str, str, str, str]:
    return next(c for c in _conds(update) if c[0] == kind)


def _created(job: dict[str, Any]) -> dict[str, Any]:
    status, events = mark_created(job, now=NOW)
    assert events == [Event("Normal", "MPIJobCreated", "MPIJob default/pi is created.")]
    return _with_status(job, status)


def test_first_sync_status() -> None:
    """A first sync: Created condition, `replicaStatuses: {Launcher: {}, Worker: {}}`,
    startTime now; event MPIJobCreated."""
    job = _created(pi_job())
    job = _with_status(job, mark_started(job, now=NOW))
    launcher = _launcher(job)
    update = update_mpi_job_status(
        job, launcher=launcher, workers=_workers(job, "Pending", "Pending"), now=NOW
    )
    assert update.status == {
        "conditions": [
            {
                "type": "Created",
                "status": "True",
                "lastUpdateTime": NOW_TEXT,
                "lastTransitionTime": NOW_TEXT,
                "reason": "MPIJobCreated",
                "message": "MPIJob default/pi is created.",
            }
        ],
        "startTime": NOW_TEXT,
        "replicaStatuses": {"Launcher": {}, "Worker": {}},
    }
    assert update.changed
    assert update.events == []
    assert mark_created(_with_status(job, update.status), now=NOW)[1] == []


def test_whole_life_to_success() -> None:
    """Workers Running → Worker.active 2; launcher pod Running too → Launcher.active 1,
    Running=True and event `MPIJob default/pi is running` (repeated on every such sync);
    launcher Complete → Launcher.succeeded 1, Worker {}, Running False, Succeeded True,
    completionTime from the Job."""
    job = _created(pi_job())
    launcher = _launcher(job)
    update = update_mpi_job_status(
        job, launcher=launcher, workers=_workers(job, "Running", "Running"), now=NOW
    )
    assert update.status["replicaStatuses"] == {"Launcher": {}, "Worker": {"active": 2}}
    assert update.events == []
    job = _with_status(job, update.status)

    pods = [_launcher_pod("Running"), _launcher_pod("Running", owner="someone-else")]
    update = update_mpi_job_status(
        job,
        launcher=launcher,
        launcher_pods=pods,
        workers=_workers(job, "Running", "Running"),
        now=NOW,
    )
    assert update.status["replicaStatuses"] == {"Launcher": {"active": 1}, "Worker": {"active": 2}}
    assert _conds(update)[-1] == (
        "Running",
        "True",
        "MPIJobRunning",
        "MPIJob default/pi is running.",
    )
    assert update.events == [Event("Normal", "MPIJobRunning", "MPIJob default/pi is running")]
    job = _with_status(job, update.status)
    again = update_mpi_job_status(
        job,
        launcher=launcher,
        launcher_pods=pods,
        workers=_workers(job, "Running", "Running"),
        now=NOW,
    )
    assert not again.changed
    assert again.events == update.events

    done = _launcher(
        job,
        completionTime="2024-05-01T13:00:00Z",
        conditions=[{"type": "Complete", "status": "True"}],
    )
    update = update_mpi_job_status(job, launcher=done, workers=[], now=NOW + timedelta(hours=1))
    assert update.status["replicaStatuses"] == {"Launcher": {"succeeded": 1}, "Worker": {}}
    assert update.status["completionTime"] == "2024-05-01T13:00:00Z"
    assert [c[:3] for c in _conds(update)] == [
        ("Created", "True", "MPIJobCreated"),
        ("Running", "False", "MPIJobRunning"),
        ("Succeeded", "True", "MPIJobSucceeded"),
    ]
    assert _conds(update)[-1][3] == "MPIJob default/pi successfully completed."
    assert update.events == [
        Event("Normal", "MPIJobSucceeded", "MPIJob default/pi successfully completed.")
    ]
    assert update.launcher_succeeded
    assert not update.launcher_failed


def test_success_before_running_was_seen() -> None:
    """Finished without a Running condition: Running False `...finished but Running condition
    was never set.` with both times = completionTime."""
    job = _created(pi_job())
    done = _launcher(
        job,
        completionTime="2024-05-01T13:00:00Z",
        conditions=[{"type": "Complete", "status": "True"}],
    )
    update = update_mpi_job_status(job, launcher=done, now=NOW)
    running = update.status["conditions"][-1]
    assert running == {
        "type": "Running",
        "status": "False",
        "lastUpdateTime": "2024-05-01T13:00:00Z",
        "lastTransitionTime": "2024-05-01T13:00:00Z",
        "reason": "MPIJobRunning",
        "message": "MPIJob default/pi is finished but Running condition was never set.",
    }


def test_failed_with_backoff_limit_exceeded_names_the_last_failed_pod() -> None:
    """updateMPIJobFailedStatus: BackoffLimitExceeded + "/" + the reason of the latest failed
    launcher pod, message + ": " + its message; Launcher.failed mirrors Job.status.failed;
    completionTime = now; Warning event with the same reason and message."""
    job = _created(pi_job())
    failed = _launcher(
        job,
        failed=2,
        conditions=[
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    )
    pods = [
        _launcher_pod(
            "Failed",
            created="2024-05-01T11:00:00Z",
            reason="FailedReason1",
            message="first message",
        ),
        _launcher_pod(
            "Failed",
            created="2024-05-01T11:05:00Z",
            reason="FailedReason2",
            message="second message",
        ),
        _launcher_pod("Running", created="2024-05-01T11:10:00Z"),
    ]
    update = update_mpi_job_status(job, launcher=failed, launcher_pods=pods, now=NOW)
    reason = "BackoffLimitExceeded/FailedReason2"
    msg = "Job has reached the specified backoff limit: second message"
    assert _cond(update, "Failed") == ("Failed", "True", reason, msg)
    assert update.events == [Event("Warning", reason, msg)]
    assert update.status["completionTime"] == NOW_TEXT
    assert update.status["replicaStatuses"]["Launcher"] == {"failed": 2}
    assert update.launcher_failed
    assert [c[0] for c in _conds(update)] == ["Created", "Failed", "Running"]


def test_failed_without_reason_or_message() -> None:
    """An empty Job failure reason/message becomes MPIJobFailed / `MPIJob <ns>/<name> has failed`;
    other reasons (DeadlineExceeded) pass through."""
    job = _created(pi_job())
    blank = _launcher(job, conditions=[{"type": "Failed", "status": "True"}])
    update = update_mpi_job_status(job, launcher=blank, now=NOW)
    assert _cond(update, "Failed") == (
        "Failed",
        "True",
        "MPIJobFailed",
        "MPIJob default/pi has failed",
    )
    deadline = _launcher(
        job,
        conditions=[
            {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "message": "late"}
        ],
    )
    update = update_mpi_job_status(job, launcher=deadline, now=NOW)
    assert _cond(update, "Failed") == ("Failed", "True", "DeadlineExceeded", "late")


def test_evicted_workers_fail_the_job_without_completion_time() -> None:
    """Eviction: Failed=True MPIJobEvicted `<n>/<total> workers are evicted`, Warning event;
    completionTime is not set (quirk 5)."""
    job = _created(pi_job())
    workers = _workers(job, "Failed", "Running", reason="Evicted")
    workers[1]["status"]["reason"] = ""
    update = update_mpi_job_status(job, launcher=_launcher(job), workers=workers, now=NOW)
    assert _cond(update, "Failed") == ("Failed", "True", "MPIJobEvicted", "1/2 workers are evicted")
    assert Event("Warning", "MPIJobEvicted", "1/2 workers are evicted") in update.events
    assert "completionTime" not in update.status
    assert update.status["replicaStatuses"]["Worker"] == {"failed": 1, "active": 1}


def test_suspended_then_resumed() -> None:
    """Created suspended: no startTime; Suspended True (MPIJobSuspended, `MPIJob suspended`) and
    Running False (`MPIJob default/pi is suspended.`). Resumed: Suspended False MPIJobResumed,
    startTime = now, event MPIJobResumed."""
    job = _created(pi_job(runPolicy={"cleanPodPolicy": "None", "suspend": True}))
    job = _with_status(job, mark_started(job, now=NOW))
    assert "startTime" not in job["status"]
    update = update_mpi_job_status(job, launcher=_launcher(job), now=NOW)
    assert _conds(update) == [
        ("Created", "True", "MPIJobCreated", "MPIJob default/pi is created."),
        ("Suspended", "True", "MPIJobSuspended", "MPIJob suspended"),
        ("Running", "False", "MPIJobSuspended", "MPIJob default/pi is suspended."),
    ]
    assert update.events == [Event("Normal", "MPIJobSuspended", "MPIJob suspended")]
    assert (
        update_mpi_job_status(
            _with_status(job, update.status), launcher=_launcher(job), now=NOW
        ).events
        == []
    )

    resumed = _with_status(
        pi_job(runPolicy={"cleanPodPolicy": "None", "suspend": False}), update.status
    )
    later = NOW + timedelta(minutes=5)
    update = update_mpi_job_status(resumed, launcher=_launcher(resumed), now=later)
    assert ("Suspended", "False", "MPIJobResumed", "MPIJob resumed") in _conds(update)
    assert update.status["startTime"] == "2024-05-01T12:05:00Z"
    assert update.events == [Event("Normal", "MPIJobResumed", "MPIJob resumed")]


def test_no_launcher_yet_has_only_worker_status() -> None:
    """WaitForWorkersReady before the launcher exists: only `replicaStatuses.Worker`."""
    job = _created(pi_job(launcherCreationPolicy="WaitForWorkersReady"))
    update = update_mpi_job_status(job, launcher=None, workers=_workers(job, "Running"), now=NOW)
    assert update.status["replicaStatuses"] == {"Worker": {"active": 1}}


def test_clean_up_worker_status_and_inputs_untouched() -> None:
    job = _created(pi_job())
    job["status"]["replicaStatuses"] = {"Launcher": {"active": 1}, "Worker": {"active": 2}}
    snapshot = repr(job)
    assert clean_up_worker_status(job["status"])["replicaStatuses"] == {
        "Launcher": {"active": 1},
        "Worker": {},
    }
    update_mpi_job_status(job, launcher=_launcher(job), workers=_workers(job, "Running"), now=NOW)
    assert repr(job) == snapshot
