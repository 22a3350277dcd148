"""The XGBoostJob status rules (training-operator v1.9 ``XGBoostJobReconciler.UpdateJobStatus``
in ``xgboostjob_controller.go``): every branch with its exact conditions, messages and events,
on top of the condition rules of ``pkg/util/status.go`` (``UpdateJobConditions``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mpi_controller.kube.events import Event
from mpi_controller.xgboost import parse_xgboostjob, set_defaults, update_xgboostjob_status
from mpi_controller.xgboost.status import status_order
from tests.unit.xgboost.jobs import replica, xgboostjob

NOW = datetime(2026, 1, 1, tzinfo=UTC)
STAMP = "2026-01-01T00:00:00Z"
EARLIER = "2025-12-31T23:59:00Z"
RUNNING = "XGBoostJob j is running."
SUCCEEDED = Event("Normal", "XGBoostJobSucceeded", "XGBoostJob j is successfully completed.")
CREATED = {"type": "Created", "status": "True", "reason": "XGBoostJobCreated",
           "message": "XGBoostJob j is created.", "lastUpdateTime": EARLIER,
           "lastTransitionTime": EARLIER}


def view(workers: int = 2, restart: str | None = None, *, first: str = "Master") -> Any:
    specs = {"Master": replica(1), "Worker": replica(workers, restart=restart)}
    if first != "Master":
        specs = {"Worker": specs["Worker"], "Master": specs["Master"]}
    body = xgboostjob("j", specs)
    body["metadata"]["namespace"] = "n"
    return parse_xgboostjob(set_defaults(body))


def pod(rtype: str, index: int, phase: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"j-{rtype}-{index}", "labels": {
        "training.kubeflow.org/replica-type": rtype,
        "training.kubeflow.org/replica-index": str(index)}}
    if deleting:
        meta["deletionTimestamp"] = STAMP
    return {"metadata": meta, "status": {"phase": phase}}


def run(job: Any, counts: dict[str, dict[str, Any]], *, pods: list[dict[str, Any]] | None = None,
        conditions: list[dict[str, Any]] | None = None,
        ) -> tuple[list[tuple[str, str, str, str]], list[Event], dict[str, Any]]:
    """The rules on a status with these replica counts (and ``conditions``, default Created)."""
    status: dict[str, Any] = {"replicaStatuses": counts,
                              "conditions": list(conditions or [dict(CREATED)])}
    events = update_xgboostjob_status(job, status, pods=pods or [], now=NOW)
    return ([(c["type"], c["status"], c["reason"], c["message"])
             for c in status["conditions"][1:]], events, status)


def test_an_active_master_makes_the_job_running() -> None:
    """``rtype == Master && running > 0``: Running, ``XGBoostJob <name> is running.``."""
    conds, events, status = run(view(), {"Master": {"active": 1}, "Worker": {"active": 2}})
    assert conds == [("Running", "True", "XGBoostJobRunning", RUNNING)]
    assert events == []
    assert "completionTime" not in status
    assert status["conditions"][1]["lastTransitionTime"] == STAMP


@pytest.mark.parametrize("counts", [
    {"Master": {}, "Worker": {"active": 2}},
    {"Master": {}, "Worker": {"succeeded": 2}},
    {"Worker": {"active": 2}},
])
def test_workers_alone_decide_nothing(counts: dict[str, dict[str, int]]) -> None:
    """Only the Master sets Running and Succeeded: active or succeeded workers (even all of
    them, even without a replicaStatuses entry for the Master) change nothing."""
    assert run(view(), counts)[:2] == ([], [])


def test_the_master_succeeding_completes_the_job() -> None:
    """``expected == 0`` on the Master: Running (added even if never seen), then Succeeded,
    which turns Running False; a Normal XGBoostJobSucceeded event; completionTime."""
    conds, events, status = run(view(), {"Master": {"succeeded": 1},
                                         "Worker": {"active": 2}})
    assert conds == [("Running", "False", "XGBoostJobRunning", RUNNING),
                     ("Succeeded", "True", "XGBoostJobSucceeded",
                      "XGBoostJob j is successfully completed.")]
    assert events == [SUCCEEDED]
    assert status["completionTime"] == STAMP


def test_success_keeps_an_earlier_running_condition_and_completion_time() -> None:
    """UpdateJobConditions: Running set again with the same reason is a no-op (its times stay);
    ``CompletionTime`` is set only when nil."""
    running = {"type": "Running", "status": "True", "reason": "XGBoostJobRunning",
               "message": RUNNING, "lastUpdateTime": EARLIER, "lastTransitionTime": EARLIER}
    status: dict[str, Any] = {"replicaStatuses": {"Master": {"succeeded": 1}},
                              "conditions": [dict(CREATED), running],
                              "completionTime": EARLIER}
    update_xgboostjob_status(view(), status, pods=[], now=NOW)
    assert status["conditions"][1] == {**running, "status": "False"}
    assert status["completionTime"] == EARLIER


@pytest.mark.parametrize("restart", ["Never", "OnFailure", "Always"])
def test_a_failure_under_any_policy_but_exit_code_fails_the_job(restart: str) -> None:
    """``failed > 0`` and restartPolicy != ExitCode: Running, then Failed (``XGBoostJob <name> is
    failed because <n> <type> replica(s) failed.``), a Normal XGBoostJobFailed event,
    completionTime; also OnFailure and Always, whose Failed pod the replica step restarts."""
    conds, events, status = run(view(restart=restart), {"Master": {"active": 1},
                                                        "Worker": {"active": 1, "failed": 1}})
    message = "XGBoostJob j is failed because 1 Worker replica(s) failed."
    assert conds == [("Running", "False", "XGBoostJobRunning", RUNNING),
                     ("Failed", "True", "XGBoostJobFailed", message)]
    assert events == [Event("Normal", "XGBoostJobFailed", message)]
    assert status["completionTime"] == STAMP


def test_a_master_failure_counts_the_masters() -> None:
    conds, events, _ = run(view(), {"Master": {"failed": 1}, "Worker": {"active": 2}})
    message = "XGBoostJob j is failed because 1 Master replica(s) failed."
    assert conds[-1] == ("Failed", "True", "XGBoostJobFailed", message)
    assert events == [Event("Normal", "XGBoostJobFailed", message)]


def test_exit_code_failures_mark_the_job_restarting() -> None:
    """restartPolicy ExitCode: Running, then Restarting (which replaces it), ``XGBoostJob <name>
    is restarting because <n> <type> replica(s) failed.``, a Warning XGBoostJobRestarting event
    for a Failed pod not yet being deleted; no completionTime."""
    pods = [pod("worker", 0, "Failed"), pod("worker", 1, "Failed"), pod("master", 0, "Running")]
    conds, events, status = run(view(3, "ExitCode"), {"Master": {"active": 1},
                                                      "Worker": {"active": 1, "failed": 2}},
                                pods=pods)
    message = "XGBoostJob j is restarting because 2 Worker replica(s) failed."
    assert conds == [("Restarting", "True", "XGBoostJobRestarting", message)]
    assert events == [Event("Warning", "XGBoostJobRestarting", message)]
    assert "completionTime" not in status


def test_a_failure_already_acted_on_records_no_event_again() -> None:
    """The Failed pod is being deleted (restarted by an earlier sync): the condition is set
    again, the event (upstream: every sync) is not."""
    conds, events, _ = run(view(1, "ExitCode"), {"Master": {"active": 1},
                                                 "Worker": {"failed": 1}},
                           pods=[pod("worker", 0, "Failed", deleting=True)])
    assert conds == [("Restarting", "True", "XGBoostJobRestarting",
                      "XGBoostJob j is restarting because 1 Worker replica(s) failed.")]
    assert events == []


def test_a_job_the_replica_step_failed_stays_failed_without_completion_time() -> None:
    """ExitCode with a permanent code: ReconcilePods already set Failed (``job "<name>" is
    failing because "<type>" replica(s) failed.``); the ExitCode branch still records its
    Restarting event but changes no condition (Failed is final), and sets no completionTime."""
    failed = {"type": "Failed", "status": "True", "reason": "XGBoostJobFailed",
              "message": 'job "j" is failing because "Worker" replica(s) failed.',
              "lastUpdateTime": STAMP, "lastTransitionTime": STAMP}
    before = [dict(CREATED), dict(failed)]
    _, events, status = run(view(1, "ExitCode"), {"Master": {"active": 1},
                                                  "Worker": {"failed": 1}},
                            pods=[pod("worker", 0, "Failed")], conditions=before)
    assert status["conditions"] == [CREATED, failed]
    assert events == [Event("Warning", "XGBoostJobRestarting",
                            "XGBoostJob j is restarting because 1 Worker replica(s) failed.")]
    assert "completionTime" not in status


@pytest.mark.parametrize("first", ["Master", "Worker"])
def test_the_master_is_visited_first(first: str) -> None:
    """Upstream ranges over a Go map; here the Master comes first whatever the written order,
    so a Master success in the sync that sees a Worker failure succeeds the job."""
    job = view(restart="Never", first=first)
    assert status_order(job) == ["Master", "Worker"]
    conds, events, _ = run(job, {"Master": {"succeeded": 1}, "Worker": {"failed": 1}})
    assert conds[-1][:3] == ("Succeeded", "True", "XGBoostJobSucceeded")
    assert events == [SUCCEEDED]


def test_a_worker_failure_after_the_master_is_running() -> None:
    """Running from the Master, then a Worker failure under Never fails the job in the same
    pass (one Running condition, turned False)."""
    conds, _, _ = run(view(restart="Never"), {"Master": {"active": 1},
                                              "Worker": {"active": 1, "failed": 1}})
    assert [c[:3] for c in conds] == [("Running", "False", "XGBoostJobRunning"),
                                      ("Failed", "True", "XGBoostJobFailed")]


def test_restarting_then_running_again() -> None:
    """After a restart, the recreated pod running: the Master's Running replaces Restarting."""
    restarting = {"type": "Restarting", "status": "True", "reason": "XGBoostJobRestarting",
                  "message": "m", "lastUpdateTime": EARLIER, "lastTransitionTime": EARLIER}
    conds, events, _ = run(view(1, "ExitCode"), {"Master": {"active": 1},
                                                 "Worker": {"active": 1}},
                           conditions=[dict(CREATED), restarting])
    assert conds == [("Running", "True", "XGBoostJobRunning", RUNNING)]
    assert events == []


def test_malformed_counts_read_as_zero() -> None:
    """A hand-edited status (a bool, a string count) does not break the rules."""
    conds, _, _ = run(view(), {"Master": {"active": True, "succeeded": "1"},
                               "Worker": {"failed": "2"}})
    assert conds == []


def test_times_are_now() -> None:
    """Conditions and completionTime carry the sync's wall-clock time."""
    later = NOW + timedelta(seconds=5)
    status: dict[str, Any] = {"replicaStatuses": {"Master": {"active": 1}}}
    update_xgboostjob_status(view(), status, pods=[], now=later)
    assert status["conditions"][0]["lastUpdateTime"] == "2026-01-01T00:00:05Z"
