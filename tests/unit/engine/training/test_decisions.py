"""The pure decisions of ReconcileJobs: exit codes and restarts, replica counting, backoff,
deadline, TTL, cleanup and abnormal-pod events (training-operator common/job.go, pod.go,
core/job.go, core/status.go)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mpi_controller.engine.training import decisions as d
from mpi_controller.engine.training.api import ReplicaSpec, RunPolicy
from mpi_controller.kube.events import Event

NOW = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)


def pod(phase: str = "Running", *, rt: str = "worker", code: int | None = None,
        name: str = "tensorflow", restarts: int = 0, deleting: bool = False,
        **status: Any) -> dict[str, Any]:
    state: dict[str, Any] = {"running": {}} if code is None else {
        "terminated": {"exitCode": code, "reason": "Error", "message": "boom"}}
    meta: dict[str, Any] = {"name": f"p-{rt}", "uid": f"u-{rt}",
                            "labels": {"training.kubeflow.org/replica-type": rt}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"phase": phase, "containerStatuses": [
        {"name": name, "restartCount": restarts, "state": state}], **status}}


def specs(**policies: str) -> dict[str, ReplicaSpec]:
    return {rt: ReplicaSpec(rtype=rt, replicas=1, restart_policy=p)
            for rt, p in policies.items()}


def test_exit_code_reads_the_default_container_only() -> None:
    assert d.exit_code(pod("Failed", code=3), "tensorflow") == 3
    assert d.exit_code(pod("Failed", code=3, name="side"), "tensorflow") is None
    assert d.exit_code(pod("Running"), "tensorflow") is None


@pytest.mark.parametrize(("policy", "code", "restart", "fail"), [
    ("OnFailure", 1, True, False), ("Always", 0, True, False),
    ("ExitCode", 137, True, False), ("ExitCode", 128, True, False),
    ("ExitCode", None, True, False),  # 0xbeef
    ("ExitCode", 127, False, True), ("ExitCode", 1, False, True),
    ("Never", 137, False, False),
])
def test_failed_pod_action(policy: str, code: int | None, restart: bool, fail: bool) -> None:
    assert d.failed_pod_action(policy, code) == d.FailedPodAction(restart=restart, fail=fail)


def test_count_pod() -> None:
    counts: dict[str, Any] = {}
    for p in (pod("Running"), pod("Running", deleting=True), pod("Succeeded"), pod("Failed"),
              pod("Pending"), pod("Unknown")):
        d.count_pod(counts, p)
    assert counts == {"active": 1, "failed": 2, "succeeded": 1}
    assert d.is_active(pod("Pending"))
    assert not d.is_active(pod("Running", deleting=True))


def test_exceeds_backoff_limit_only_with_limit_zero() -> None:
    zero, two = RunPolicy(backoff_limit=0), RunPolicy(backoff_limit=2)
    assert d.exceeds_backoff_limit(zero, failed=1, previously_failed=0, active=0, replicas=2)
    assert not d.exceeds_backoff_limit(zero, failed=1, previously_failed=1, active=0,
                                       replicas=2)
    assert not d.exceeds_backoff_limit(zero, failed=1, previously_failed=0, active=2,
                                       replicas=2)
    assert not d.exceeds_backoff_limit(two, failed=5, previously_failed=0, active=0, replicas=2)
    assert not d.exceeds_backoff_limit(RunPolicy(), failed=5, previously_failed=0, active=0,
                                       replicas=2)


def test_past_backoff_limit_counts_running_restartable_pods() -> None:
    pods = [pod("Running", rt="worker", restarts=1),
            pod("Running", rt="ps", restarts=5),
            pod("Failed", rt="chief", restarts=9)]
    pods[0]["status"]["initContainerStatuses"] = [{"name": "init", "restartCount": 1}]
    replicas = specs(Worker="OnFailure", PS="Never", Chief="ExitCode")
    assert d.past_backoff_limit(RunPolicy(backoff_limit=2), replicas, pods)
    assert not d.past_backoff_limit(RunPolicy(backoff_limit=3), replicas, pods)
    assert d.past_backoff_limit(RunPolicy(backoff_limit=0), replicas, pods)
    assert not d.past_backoff_limit(RunPolicy(backoff_limit=0), specs(Worker="OnFailure"),
                                    [pod("Running")])
    assert not d.past_backoff_limit(RunPolicy(), replicas, pods)


def test_deadline_and_ttl() -> None:
    started = {"startTime": "2026-01-01T00:00:00Z"}
    assert d.past_active_deadline(RunPolicy(active_deadline_seconds=60), started, NOW)
    assert not d.past_active_deadline(RunPolicy(active_deadline_seconds=61), started, NOW)
    assert not d.past_active_deadline(RunPolicy(active_deadline_seconds=1), {}, NOW)
    assert d.deadline_remaining(RunPolicy(active_deadline_seconds=90), started, NOW) == 30
    assert d.deadline_remaining(RunPolicy(), started, NOW) is None
    finished = {"completionTime": "2026-01-01T00:00:30Z"}
    assert d.ttl_remaining(RunPolicy(ttl_seconds_after_finished=40), finished, NOW) == 10
    assert d.ttl_remaining(RunPolicy(ttl_seconds_after_finished=10), finished, NOW) == 0
    assert d.ttl_remaining(RunPolicy(ttl_seconds_after_finished=10, suspend=True), finished,
                           NOW) is None
    assert d.ttl_remaining(RunPolicy(ttl_seconds_after_finished=10), {}, NOW) is None
    assert d.parse_time("garbage") is None


def test_pods_to_clean_up() -> None:
    pods = [pod("Running", rt="a"), pod("Pending", rt="b"), pod("Succeeded", rt="c"),
            pod("Failed", rt="d"), pod("Running", rt="e", deleting=True)]

    def names(policy: str | None, finished: bool) -> list[str]:
        return [p["metadata"]["name"] for p in d.pods_to_clean_up(
            pods, RunPolicy(clean_pod_policy=policy), finished=finished)]

    assert names("None", False) == ["p-a", "p-b", "p-c", "p-d"]
    assert names("None", True) == []
    assert names("Running", True) == ["p-a", "p-b"]
    assert names("All", True) == ["p-a", "p-b", "p-c", "p-d"]


def test_abnormal_pod_events() -> None:
    crashed = pod("Running", code=2)
    waiting = pod("Pending", rt="ps")
    waiting["status"]["containerStatuses"] = [
        {"name": "tensorflow", "state": {"waiting": {"reason": "ErrImagePull",
                                                    "message": "no such image"}}}]
    unscheduled = {"metadata": {"name": "u", "uid": "uu"}, "status": {
        "phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                            "reason": "Unschedulable", "message": "0/4"}]}}
    init = {"metadata": {"name": "i", "uid": "ui"}, "status": {
        "phase": "Pending", "initContainerStatuses": [
            {"name": "init", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}
    done = pod("Failed", rt="chief", code=1)
    assert d.abnormal_pod_events([crashed, waiting, unscheduled, init, done]) == [
        ("u-worker", Event("Warning", "Error", "Error pod p-worker container tensorflow "
                                               "exitCode: 2 terminated message: boom")),
        ("u-ps", Event("Warning", "ErrImagePull", "Error pod p-ps container tensorflow waiting "
                                                  "message: no such image")),
        ("uu", Event("Warning", "Unschedulable", "Error pod u condition message: 0/4")),
        ("ui", Event("Warning", "Error", "Error pod i container init exitCode: 1 terminated "
                                         "message: ")),
    ]
