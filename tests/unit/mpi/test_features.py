"""The opt-ins' pure parts (mpi_controller.mpi.features): each off gives exactly upstream's
object or decision, each on gives the fix. The sync on the in-memory API is in
test_kind_opt_ins.py."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest

from mpi_controller.mpi import decisions, failures, gang, status
from mpi_controller.mpi.configmap import discover_hosts_script
from mpi_controller.mpi.features import (
    GATES,
    SSH_READINESS_PORT_ANNOTATION,
    TTL_DELETES_ANNOTATION,
    Features,
    ssh_readiness_port,
    ttl_deletes_mpijob,
)
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.v2beta1.validation import validate
from mpi_controller.mpi.worker import new_worker
from tests.unit.mpi.conftest import NOW, NOW_TEXT, pi_job

PORT = SSH_READINESS_PORT_ANNOTATION


def annotated(job: dict[str, Any], **annotations: str) -> dict[str, Any]:
    out = copy.deepcopy(job)
    out["metadata"]["annotations"] = dict(annotations)
    return out


def ssh_job(port: str = "2222", **spec: Any) -> dict[str, Any]:
    return annotated(pi_job(**spec), **{PORT: port})


def pod(job: dict[str, Any], i: int, phase: str, *, ready: bool = False,
        **status_fields: Any) -> dict[str, Any]:
    out = new_worker(job, i)
    out["status"] = {"phase": phase, **status_fields,
                     "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return out


# -- the gates and annotations --------------------------------------------------------------


def test_every_gate_is_off_by_default_and_named_as_the_flag_spells_it() -> None:
    assert Features().enabled() == []
    assert list(GATES) == ["GangWaitForWorkersReady", "LauncherWaitsOnResume",
                           "CleanUpEvictedJobs", "CleanPodPolicyAllLauncher", "FailureDetails",
                           "JobMetrics", "ScaleSelector"]
    every = Features.parse(",".join(f"{name}=true" for name in GATES))
    assert every.enabled() == list(GATES)
    assert Features.parse("JobMetrics=true,ScaleSelector=false") == Features(job_metrics=True)


def test_annotations_read_as_set_and_only_valid_values_count() -> None:
    job = pi_job()
    assert ssh_readiness_port(job) is None
    assert not ttl_deletes_mpijob(job)
    assert ssh_readiness_port(ssh_job("22")) == 22
    for bad in ("0", "65536", "ssh", "-1", ""):
        assert ssh_readiness_port(ssh_job(bad)) is None
    assert ttl_deletes_mpijob(annotated(job, **{TTL_DELETES_ANNOTATION: "MPIJob"}))
    assert not ttl_deletes_mpijob(annotated(job, **{TTL_DELETES_ANNOTATION: "Launcher"}))


def test_invalid_annotations_are_validation_errors_after_upstreams_own() -> None:
    job = annotated(pi_job(slotsPerWorker=-1), **{PORT: "ssh", TTL_DELETES_ANNOTATION: "Pods"})
    assert [str(e) for e in validate(job)] == [
        "spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0",
        f'metadata.annotations[{PORT}]: Invalid value: "ssh": must be a port number between '
        "1 and 65535",
        f'metadata.annotations[{TTL_DELETES_ANNOTATION}]: Unsupported value: "Pods": '
        'supported values: "Launcher", "MPIJob"',
    ]
    assert validate(ssh_job("22")) == []
    assert validate(annotated(pi_job(), **{TTL_DELETES_ANNOTATION: "MPIJob"})) == []


# -- 1. SSH readiness (#386) ----------------------------------------------------------------


def test_workers_get_a_tcp_readiness_probe_on_the_ssh_port_only_when_opted_in() -> None:
    assert "readinessProbe" not in new_worker(pi_job(), 0)["spec"]["containers"][0]
    worker = new_worker(ssh_job("2222"), 0)
    assert worker["spec"]["containers"][0]["readinessProbe"] == {
        "tcpSocket": {"port": 2222}, "periodSeconds": 1}
    own = ssh_job("22")
    own_probe = {"exec": {"command": ["true"]}}
    own["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "readinessProbe"] = own_probe
    assert new_worker(own, 0)["spec"]["containers"][0]["readinessProbe"] == own_probe
    assert "readinessProbe" not in new_launcher_job(ssh_job())["spec"]["template"]["spec"][
        "containers"][0]


def test_the_ssh_annotation_makes_the_launcher_wait_for_ready_workers() -> None:
    job, opted = pi_job(), ssh_job()
    unready = [pod(job, 0, "Running", ready=True), pod(job, 1, "Running")]
    assert decisions.should_create_launcher(job, unready)  # AtStartup: at once (upstream)
    assert not decisions.launcher_waits_for_workers(job)
    assert decisions.launcher_waits_for_workers(opted)
    assert not decisions.should_create_launcher(opted, unready)
    ready = [pod(job, 0, "Running", ready=True), pod(job, 1, "Running", ready=True)]
    assert decisions.should_create_launcher(opted, ready)


def test_discover_hosts_lists_running_workers_and_with_ssh_readiness_only_ready_ones() -> None:
    job, opted = pi_job(), ssh_job()
    pods = [pod(job, 0, "Running", ready=True), pod(job, 1, "Running")]
    assert discover_hosts_script(job, pods) == (
        "#!/bin/sh\necho pi-worker-0.pi.default.svc\necho pi-worker-1.pi.default.svc\n")
    assert discover_hosts_script(opted, pods) == "#!/bin/sh\necho pi-worker-0.pi.default.svc\n"


# -- 2. WaitForWorkersReady with gang scheduling (#608) and on resume (#615) ------------------


def test_the_pod_group_counts_the_launcher_unless_it_waits_for_the_workers() -> None:
    job = pi_job(launcherCreationPolicy="WaitForWorkersReady")
    for template in job["spec"]["mpiReplicaSpecs"].values():
        template["template"]["spec"]["containers"][0]["resources"] = {
            "requests": {"cpu": "1"}}
    upstream = gang.new_pod_group(job, gang_scheduling="volcano")
    assert upstream is not None
    assert upstream["spec"] == {"minMember": 3, "minResources": {"cpu": "3"}}
    fixed = gang.new_pod_group(job, gang_scheduling="volcano", workers_only=True)
    assert fixed is not None
    assert fixed["spec"] == {"minMember": 2, "minResources": {"cpu": "2"}}
    explicit = pi_job(launcherCreationPolicy="WaitForWorkersReady",
                      runPolicy={"cleanPodPolicy": "None",
                                 "schedulingPolicy": {"minAvailable": 3}})
    chosen = gang.new_pod_group(explicit, gang_scheduling="volcano", workers_only=True)
    assert chosen is not None
    assert chosen["spec"]["minMember"] == 3  # the user's choice


def test_a_resumed_launcher_is_held_until_the_workers_are_ready() -> None:
    job = pi_job(launcherCreationPolicy="WaitForWorkersReady")
    launcher = new_launcher_job(pi_job(runPolicy={"suspend": True}))
    new = [pod(job, 0, "Pending"), pod(job, 1, "Pending")]
    assert not decisions.hold_launcher(job, new, on_resume=False)  # upstream: resume at once
    assert decisions.launcher_suspension_action(job, launcher) == "resume"
    assert decisions.hold_launcher(job, new, on_resume=True)
    assert decisions.launcher_suspension_action(job, launcher, hold=True) is None
    ready = [pod(job, 0, "Running", ready=True), pod(job, 1, "Running", ready=True)]
    assert not decisions.hold_launcher(job, ready, on_resume=True)
    assert not decisions.hold_launcher(pi_job(), new, on_resume=True)  # AtStartup
    assert decisions.hold_launcher(ssh_job(), new, on_resume=False)  # the annotation holds


# -- 3. TTL of the whole MPIJob (#644) -------------------------------------------------------


def test_ttl_remaining_counts_from_the_completion_time() -> None:
    job = pi_job()  # ttlSecondsAfterFinished: 60
    assert decisions.ttl_remaining(job, NOW) is None
    job["status"] = {"completionTime": NOW_TEXT}
    assert decisions.ttl_remaining(job, NOW) == 60
    assert decisions.ttl_remaining(job, NOW + timedelta(seconds=75)) == -15
    assert decisions.ttl_remaining(pi_job(runPolicy={"cleanPodPolicy": "None"}) | {
        "status": {"completionTime": NOW_TEXT}}, NOW) is None


def test_with_ttl_deleting_the_mpijob_the_launcher_job_gets_no_ttl_of_its_own() -> None:
    assert new_launcher_job(pi_job())["spec"]["ttlSecondsAfterFinished"] == 60
    opted = annotated(pi_job(), **{TTL_DELETES_ANNOTATION: "MPIJob"})
    assert "ttlSecondsAfterFinished" not in new_launcher_job(opted)["spec"]
    kept = annotated(pi_job(), **{TTL_DELETES_ANNOTATION: "Launcher"})
    assert new_launcher_job(kept)["spec"]["ttlSecondsAfterFinished"] == 60


# -- 4. eviction (#647) ----------------------------------------------------------------------


EVICTED = {"reason": "Evicted", "message": "The node was low on resource: memory."}


def test_eviction_fails_the_job_and_with_the_gate_completes_it() -> None:
    job = pi_job()
    workers = [pod(job, 0, "Running"), pod(job, 1, "Failed", **EVICTED)]
    upstream = status.update_mpi_job_status(job, launcher=None, workers=workers, now=NOW)
    assert decisions.is_evicted(upstream.status)
    assert "completionTime" not in upstream.status
    fixed = status.update_mpi_job_status(job, launcher=None, workers=workers, now=NOW,
                                         complete_on_eviction=True)
    assert fixed.status["completionTime"] == NOW_TEXT
    failed = [c for c in fixed.status["conditions"] if c["type"] == "Failed"]
    assert [(c["status"], c["reason"], c["message"]) for c in failed] == [
        ("True", "MPIJobEvicted", "1/2 workers are evicted")]


# -- 5. failure details (#90) ----------------------------------------------------------------


def terminated(name: str, code: int, reason: str) -> dict[str, Any]:
    return {"name": name, "restartCount": 0,
            "state": {"terminated": {"exitCode": code, "reason": reason}}}


def test_a_pod_failure_names_the_container_exit_code_and_reason() -> None:
    job = pi_job()
    oom = pod(job, 1, "Failed", containerStatuses=[terminated("mpi-worker", 137, "OOMKilled")])
    assert failures.pod_failure(oom, "worker") == (
        "worker pod pi-worker-1: container mpi-worker terminated with exit code 137 "
        "(OOMKilled)")
    pulling = pod(job, 0, "Pending", containerStatuses=[
        {"name": "mpi-worker", "state": {"waiting": {"reason": "ImagePullBackOff"}}}])
    assert failures.pod_failure(pulling, "worker") == (
        "worker pod pi-worker-0: container mpi-worker waiting (ImagePullBackOff)")
    evicted = pod(job, 0, "Failed", **EVICTED)
    assert failures.pod_failure(evicted, "worker") == (
        "worker pod pi-worker-0 failed (Evicted: The node was low on resource: memory.)")
    fine = pod(job, 0, "Running", containerStatuses=[
        {"name": "mpi-worker", "state": {"running": {}}}])
    starting = pod(job, 0, "Pending", containerStatuses=[
        {"name": "mpi-worker", "state": {"waiting": {"reason": "ContainerCreating"}}}])
    done = pod(job, 0, "Succeeded", containerStatuses=[terminated("mpi-worker", 0, "Completed")])
    assert [failures.pod_failure(p, "worker") for p in (fine, starting, done)] == [None] * 3
    for odd in ({}, {"status": {"containerStatuses": [None, {"state": []}]}}):
        assert failures.pod_failure(odd, "worker") is None


def launcher_pod(name: str, created: str, code: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": created,
                         "labels": {"training.kubeflow.org/job-role": "launcher"}},
            "status": {"phase": "Failed",
                       "containerStatuses": [terminated("mpi-launcher", code, "Error")]}}


def test_failure_details_name_failed_workers_then_the_last_failed_launcher_pod() -> None:
    job = pi_job()
    workers = [pod(job, i, "Failed", containerStatuses=[terminated("w", 1, "Error")])
               for i in range(8)]
    launchers = [launcher_pod("pi-launcher-a", "2024-05-01T11:00:00Z", 1),
                 launcher_pod("pi-launcher-b", "2024-05-01T11:05:00Z", 2)]
    assert failures.failure_details([*launchers, *reversed(workers)]) == "; ".join([
        *(f"worker pod pi-worker-{i}: container w terminated with exit code 1 (Error)"
          for i in range(5)),
        "and 3 more failed workers",
        "launcher pod pi-launcher-b: container mpi-launcher terminated with exit code 2 (Error)",
    ])
    assert failures.failure_details([pod(job, 0, "Running")]) == ""


def test_the_failed_condition_names_what_failed_only_with_the_gate() -> None:
    job = pi_job()
    launcher = new_launcher_job(job)
    launcher["status"] = {"failed": 1, "conditions": [
        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
         "message": "Job has reached the specified backoff limit"}]}
    oom = pod(job, 1, "Failed", containerStatuses=[terminated("mpi-worker", 137, "OOMKilled")])
    upstream = status.update_mpi_job_status(job, launcher=launcher, now=NOW)
    fixed = status.update_mpi_job_status(job, launcher=launcher, now=NOW,
                                         failure_pods=[pod(job, 0, "Running"), oom])
    base = "Job has reached the specified backoff limit"
    for update, message in ((upstream, base), (fixed, base + (
            "; failed: worker pod pi-worker-1: container mpi-worker terminated with exit "
            "code 137 (OOMKilled)"))):
        failed = next(c for c in update.status["conditions"] if c["type"] == "Failed")
        assert (failed["reason"], failed["message"]) == ("BackoffLimitExceeded", message)
        assert update.events[-1].message == message


def test_evicted_workers_are_named_with_the_gate() -> None:
    job = pi_job()
    workers = [pod(job, 0, "Running"), pod(job, 1, "Failed", **EVICTED)]
    update = status.update_mpi_job_status(job, launcher=None, workers=workers, now=NOW,
                                          failure_pods=workers)
    failed = next(c for c in update.status["conditions"] if c["type"] == "Failed")
    assert failed["message"] == (
        "1/2 workers are evicted: worker pod pi-worker-1 failed (Evicted: The node was low "
        "on resource: memory.)")


# -- 6. metrics: phases (#808) ---------------------------------------------------------------


@pytest.mark.parametrize(("conditions", "phase"), [
    ([], "Created"),
    ([("Created", "True")], "Created"),
    ([("Created", "True"), ("Running", "True")], "Running"),
    ([("Created", "True"), ("Suspended", "True"), ("Running", "False")], "Suspended"),
    ([("Running", "False"), ("Succeeded", "True")], "Succeeded"),
    ([("Running", "True"), ("Failed", "True")], "Failed"),
])
def test_the_phase_is_the_most_final_true_condition(conditions: list[tuple[str, str]],
                                                     phase: str) -> None:
    assert status.job_phase({"conditions": [{"type": t, "status": s}
                                            for t, s in conditions]}) == phase


# -- 7. the scale subresource's selector (#278) ----------------------------------------------


def test_the_worker_selector_is_written_as_format_label_selector_does() -> None:
    job = pi_job()
    before = {"replicaStatuses": {"Launcher": {"active": 1}, "Worker": {"active": 2}}}
    after = status.with_worker_selector(before, job)
    assert after["replicaStatuses"] == {"Launcher": {"active": 1}, "Worker": {
        "active": 2, "selector": "training.kubeflow.org/job-name=pi,"
                                 "training.kubeflow.org/job-role=worker,"
                                 "training.kubeflow.org/operator-name=mpi-operator"}}
    assert before["replicaStatuses"]["Worker"] == {"active": 2}  # input untouched
    no_workers = pi_job()
    del no_workers["spec"]["mpiReplicaSpecs"]["Worker"]
    assert status.with_worker_selector(before, no_workers) == before
