"""Sync-loop decisions (mpi-operator v0.8.2 ``pkg/controller/mpi_job_controller.go``):
ownership, launcher creation policy, scale-down, clean-up (``deleteWorkerPods``),
suspend/resume, managedBy, finished handling."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.kube.events import Event
from mpi_controller.kube.owners import is_controlled_by
from mpi_controller.mpi import decisions
from mpi_controller.mpi.decisions import (
    is_job_finished,
    launcher_suspension_action,
    managed_by_external_controller,
    needs_finished_cleanup,
    plan_worker_cleanup,
    plan_worker_scale_down,
    select_job_pods,
    should_create_launcher,
)
from mpi_controller.mpi.events import (
    not_controlled_event,
    resource_exists_message,
    validation_error_event,
)
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.v2beta1.validation import validate
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import pi_job


def _worker(
    job: dict[str, Any], i: int, phase: str = "Running", ready: bool = False
) -> dict[str, Any]:
    pod = new_worker(job, i)
    pod["status"] = {
        "phase": phase,
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
    }
    return pod


def test_not_controlled_message_names_the_real_kind() -> None:
    """`Resource "<name>" of Kind "<kind>" already exists and is not managed by MPIJob`;
    we name the real kind (upstream's informer objects print Kind "")."""
    job = pi_job()
    foreign = {
        "metadata": {"name": "pi-config", "ownerReferences": [{"uid": "other", "controller": True}]}
    }
    assert not is_controlled_by(foreign, job)
    assert resource_exists_message(foreign, "ConfigMap") == (
        'Resource "pi-config" of Kind "ConfigMap" already exists and is not managed by MPIJob'
    )
    assert not_controlled_event({"kind": "PodGroup", "metadata": {"name": "pi"}}) == Event(
        "Warning",
        "ErrResourceExists",
        'Resource "pi" of Kind "PodGroup" already exists and is not managed by MPIJob',
    )
    assert is_controlled_by(new_worker(job, 0), job)
    not_controller = {"metadata": {"ownerReferences": [{"uid": "U", "controller": False}]}}
    assert not is_controlled_by(not_controller, job)


@pytest.mark.parametrize(
    ("policy", "ready", "expected"),
    [
        ("AtStartup", [False, False], True),
        ("WaitForWorkersReady", [True, False], False),
        ("WaitForWorkersReady", [True, True], True),
        ("WaitForWorkersReady", [], True),
    ],
)
def test_launcher_creation_policy(policy: str, ready: list[bool], expected: bool) -> None:
    """launcherCreationPolicy: AtStartup creates at once; WaitForWorkersReady when every
    worker of this sync is Ready=True (vacuously with none, e.g. while suspended)."""
    job = pi_job(launcherCreationPolicy=policy)
    workers = [_worker(job, i, ready=r) for i, r in enumerate(ready)]
    assert should_create_launcher(job, workers) is expected


def test_scale_down_deletes_indices_beyond_replicas() -> None:
    """Scale-down: with more worker pods than replicas, pods whose replica-index >= replicas are
    deleted; other jobs' pods and label-less pods are left alone."""
    big = pi_job()
    big["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 4
    pods = [_worker(big, i) for i in range(4)]
    del pods[0]["metadata"]["labels"]["training.kubeflow.org/replica-index"]
    other = new_worker({**big, "metadata": {"name": "other", "namespace": "default",
                                            "uid": "other-uid"}}, 7)
    plan = plan_worker_scale_down(pi_job(), [*pods, other])
    assert [p["metadata"]["name"] for p in plan.delete] == ["pi-worker-2", "pi-worker-3"]
    assert plan_worker_scale_down(pi_job(), pods[:2]).delete == []


def test_scale_down_with_launcher_as_worker_is_not_off_by_one() -> None:
    """Upstream deletes worker replicas-1 too (its label is i+1); we map the label back."""
    big = pi_job(runLauncherAsWorker=True)
    big["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 3
    pods = [_worker(big, i) for i in range(3)]
    plan = plan_worker_scale_down(pi_job(runLauncherAsWorker=True), pods)
    assert [p["metadata"]["name"] for p in plan.delete] == ["pi-worker-2"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("Running", ["pi-worker-0", "pi-worker-1"]),
        ("All", ["pi-worker-0", "pi-worker-1", "pi-worker-2"]),
        ("None", ["pi-worker-0", "pi-worker-1", "pi-worker-2"]),
    ],
)
def test_clean_up_plan(policy: str, expected: list[str]) -> None:
    """deleteWorkerPods: Running keeps pods that are neither Running nor Pending; All (and
    None, on the suspend path) delete every existing worker; missing pods are skipped."""
    job = pi_job(runPolicy={"cleanPodPolicy": policy})
    job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 4
    pods = {
        p["metadata"]["name"]: p
        for p in [
            _worker(job, 0, "Running"),
            _worker(job, 1, "Pending"),
            _worker(job, 2, "Succeeded"),
        ]
    }
    assert plan_worker_cleanup(job, pods).delete == expected


def test_clean_up_stops_at_a_foreign_pod() -> None:
    job = pi_job(runPolicy={"cleanPodPolicy": "All"})
    foreign = _worker(job, 1)
    foreign["metadata"]["ownerReferences"][0]["uid"] = "x"
    plan = plan_worker_cleanup(job, {"pi-worker-0": _worker(job, 0), "pi-worker-1": foreign})
    assert plan.delete == ["pi-worker-0"]
    assert plan.error == (
        'Resource "pi-worker-1" of Kind "Pod" already exists and is not managed by MPIJob'
    )


def test_suspension_actions() -> None:
    """Suspension: resume a suspended launcher of a running MPIJob; suspend the launcher of
    a suspended MPIJob; otherwise nothing."""
    running, suspended = pi_job(), pi_job(runPolicy={"cleanPodPolicy": "None", "suspend": True})
    assert launcher_suspension_action(running, new_launcher_job(suspended)) == "resume"
    assert launcher_suspension_action(suspended, new_launcher_job(running)) == "suspend"
    assert launcher_suspension_action(running, new_launcher_job(running)) is None


def test_managed_by() -> None:
    """Step 4: a job managed by MultiKueue is skipped; unlike upstream, an unknown value is not
    (validation reports it)."""
    assert managed_by_external_controller(pi_job()) is None
    mk = pi_job(runPolicy={"cleanPodPolicy": "None", "managedBy": "kueue.x-k8s.io/multikueue"})
    assert managed_by_external_controller(mk) == "kueue.x-k8s.io/multikueue"
    ours = pi_job(runPolicy={"cleanPodPolicy": "None", "managedBy": "kubeflow.org/mpi-operator"})
    assert managed_by_external_controller(ours) is None
    unknown = pi_job(runPolicy={"cleanPodPolicy": "None", "managedBy": "example.com/other"})
    assert managed_by_external_controller(unknown) is None


def test_finished_handling() -> None:
    """Step 8: finished (Succeeded/Failed True) with completionTime: clean up for All/Running,
    stop for None; otherwise go on."""
    status = {"conditions": [{"type": "Succeeded", "status": "True"}], "completionTime": "t"}
    assert needs_finished_cleanup({**pi_job(), "status": status}) is True
    none = pi_job(runPolicy={"cleanPodPolicy": "None"})
    assert needs_finished_cleanup({**none, "status": status}) is False
    evicted = {"conditions": [{"type": "Failed", "status": "True"}]}
    assert needs_finished_cleanup({**none, "status": evicted}) is None
    launcher = new_launcher_job(pi_job())
    assert not is_job_finished(launcher)
    assert not is_job_finished(None)
    launcher["status"] = {"conditions": [{"type": "Failed", "status": "True"}]}
    assert is_job_finished(launcher)


def test_select_job_pods_uses_selector_and_controller() -> None:
    """jobPods: pods matching the Job's selector (In / NotIn / Exists supported; nil selector
    matches nothing) and controlled by the Job."""
    job = {
        "metadata": {"uid": "J"},
        "spec": {
            "selector": {
                "matchLabels": {"a": "1"},
                "matchExpressions": [
                    {"key": "b", "operator": "In", "values": ["x"]},
                    {"key": "c", "operator": "DoesNotExist"},
                ],
            }
        },
    }
    ok = {
        "metadata": {
            "labels": {"a": "1", "b": "x"},
            "ownerReferences": [{"uid": "J", "controller": True}],
        }
    }
    wrong_owner = {
        "metadata": {
            "labels": {"a": "1", "b": "x"},
            "ownerReferences": [{"uid": "K", "controller": True}],
        }
    }
    has_c = {
        "metadata": {
            "labels": {"a": "1", "b": "x", "c": ""},
            "ownerReferences": [{"uid": "J", "controller": True}],
        }
    }
    assert select_job_pods(job, [ok, wrong_owner, has_c]) == [ok]
    assert select_job_pods({"metadata": {"uid": "J"}, "spec": {}}, [ok]) == []


def test_validation_event() -> None:
    """Warning ValidationError `Found validation errors: <aggregate>`, truncated to 1024."""
    job = pi_job(slotsPerWorker=-1)
    assert validation_error_event(validate(job)) == Event(
        "Warning",
        "ValidationError",
        "Found validation errors: spec.slotsPerWorker: Invalid value: -1: "
        "must be greater than or equal to 0",
    )
    long = pi_job(mpiImplementation="x" * 2000)
    message = validation_error_event(validate(long)).message
    assert len(message) == 1024
    assert message.endswith("...")


def _launcher_job(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi-launcher", "namespace": "ns", "resourceVersion": "7",
                         "managedFields": [{"manager": "kube-controller-manager"}]},
            "spec": {"suspend": False}, "status": status}


def test_a_launcher_update_matters_unless_it_changes_only_unread_status_fields() -> None:
    started = _launcher_job(startTime="2026-12-06T12:00:00Z", active=1, ready=0,
                            terminating=0, uncountedTerminatedPods={})
    # the Job controller's updates while the launcher runs and ends (kube-controller-manager
    # of the local cluster): ready 1, then the pod counted and active gone
    ready = {**started, "metadata": {**started["metadata"], "resourceVersion": "8",
                                     "managedFields": [{"manager": "x"}]},
             "status": {**started["status"], "ready": 1}}
    counted = {**ready, "status": {k: v for k, v in ready["status"].items() if k != "active"}
               | {"ready": 0, "uncountedTerminatedPods": {"succeeded": ["uid-1"]}}}
    assert not decisions.launcher_update_matters("Job", started, ready)
    assert not decisions.launcher_update_matters("Job", ready, counted)
    # what a sync reads: the conditions, succeeded, failed, startTime, completionTime
    # the Job controller's SuccessCriteriaMet, just before Complete: not read
    criteria = {**counted, "status": {**counted["status"], "conditions": [
        {"type": "SuccessCriteriaMet", "status": "True"}]}}
    assert not decisions.launcher_update_matters("Job", counted, criteria)
    complete = {**counted, "status": {**counted["status"], "succeeded": 1,
                                      "completionTime": "2026-12-06T12:00:10Z",
                                      "conditions": [{"type": "Complete", "status": "True"}]}}
    assert decisions.launcher_update_matters("Job", counted, complete)
    assert decisions.launcher_update_matters(
        "Job", _launcher_job(active=1), _launcher_job(active=1, startTime="t"))
    assert decisions.launcher_update_matters(
        "Job", _launcher_job(active=1), _launcher_job(active=1, failed=1))
    # the spec or the labels: always
    assert decisions.launcher_update_matters("Job", started, {**ready, "spec": {"suspend": True}})
    relabelled = {**ready, "metadata": {**ready["metadata"], "labels": {"app": "pi"}}}
    assert decisions.launcher_update_matters("Job", started, relabelled)
    # the same change of another child kind: always
    assert decisions.launcher_update_matters("ConfigMap", started, ready)
    # v1alpha2 reads active (its launcherStatus follows it)
    unread = decisions.LAUNCHER_STATUS_UNREAD - {"active"}
    assert not decisions.launcher_update_matters("Job", started, ready, unread=unread)
    assert decisions.launcher_update_matters("Job", ready, counted, unread=unread)
