"""The opt-ins of mpi_controller.mpi.features on the real API server (KWOK runs the pods): each
pair of tests reproduces what mpi-operator v0.8.2's users report (kubeflow/mpi-operator issue
cited) with the opt-in off, and shows the fix with it on. Gang scheduling under a
coscheduling rule and the HPA are in test_opt_ins_scheduling.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

from mpi_controller.kube.timefmt import parse_time
from mpi_controller.mpi.features import (
    SSH_READINESS_PORT_ANNOTATION,
    TTL_DELETES_ANNOTATION,
    Features,
)
from tests.controller_harness import InProcessController, running_controller
from tests.mpijobs import DURATION, EXIT_CODE, MPIJobs, small_job
from tests.processes import ControllerProcess, http_get
from tests.support import Cluster, wait_for

pytestmark = pytest.mark.cluster

READY_AFTER = "sim.mpi-controller.io/ready-after"
EXIT_REASON = "sim.mpi-controller.io/exit-reason"
WFWR = "WaitForWorkersReady"
SSHD_STARTS = 8  # seconds a worker's sshd takes to accept connections, in these tests


@pytest.fixture
def jobs(kube_api: Any, namespace: str, mpijob_crd: str) -> MPIJobs:
    return MPIJobs(kube_api, namespace)


@pytest.fixture
def start(cluster: Cluster, namespace: str, mpijob_crd: str,
          ) -> Iterator[Any]:
    """``start(**features)``: the controller on the test's namespace with those gates."""
    running: list[Any] = []

    def run(**features: bool) -> InProcessController:
        ctx = running_controller(cluster.kubeconfig, namespace, features=Features(**features))
        controller = ctx.__enter__()
        running.append(ctx)
        return controller

    yield run
    for ctx in reversed(running):
        ctx.__exit__(None, None, None)


def template(body: dict[str, Any], role: str) -> dict[str, Any]:
    tpl: dict[str, Any] = body["spec"]["mpiReplicaSpecs"][role]["template"]
    tpl.setdefault("metadata", {}).setdefault("annotations", {})
    return tpl


def annotate(body: dict[str, Any], **annotations: str) -> dict[str, Any]:
    body["metadata"]["annotations"] = dict(annotations)
    return body


def launcher_job(jobs: MPIJobs, name: str) -> Any:
    found = [j for j in jobs.batch.list_namespaced_job(jobs.namespace).items
             if j.metadata.name == f"{name}-launcher"]
    return found[0] if found else None


def ready_since(pod: Any) -> datetime | None:
    for cond in pod.status.conditions or []:
        if cond.type == "Ready" and cond.status == "True":
            return cond.last_transition_time  # type: ignore[no-any-return]
    return None


# -- 1. SSH readiness (#386) ----------------------------------------------------------------


def ssh_job(name: str) -> dict[str, Any]:
    """WaitForWorkersReady (upstream's answer to #386), workers whose sshd listens only
    SSHD_STARTS seconds after they start."""
    body = small_job(name, workers=2, launcher_runs="600s", launcherCreationPolicy=WFWR)
    template(body, "Worker")["metadata"]["annotations"][READY_AFTER] = f"{SSHD_STARTS}s"
    return body


def test_upstream_workers_are_ready_and_the_launcher_starts_before_sshd_listens(
        jobs: MPIJobs, start: Any) -> None:
    start()
    jobs.create(ssh_job("race"))
    launcher = wait_for(lambda: launcher_job(jobs, "race"), timeout=60, what="the launcher")
    workers = jobs.workers("race")
    assert len(workers) == 2
    for pod in workers:
        assert pod.spec.containers[0].readiness_probe is None
        sshd_up = pod.status.start_time + timedelta(seconds=SSHD_STARTS)
        ready = ready_since(pod)
        assert ready is not None
        assert ready < sshd_up
        assert launcher.metadata.creation_timestamp < sshd_up  # mpirun races sshd


def test_with_ssh_readiness_the_launcher_waits_until_sshd_accepts(
        jobs: MPIJobs, start: Any) -> None:
    start()
    jobs.create(annotate(ssh_job("ssh"), **{SSH_READINESS_PORT_ANNOTATION: "2222"}))
    launcher = wait_for(lambda: launcher_job(jobs, "ssh"), timeout=60, what="the launcher")
    workers = jobs.workers("ssh")
    assert len(workers) == 2
    for pod in workers:
        probe = pod.spec.containers[0].readiness_probe
        assert (probe.tcp_socket.port, probe.period_seconds) == (2222, 1)
        ready = ready_since(pod)
        assert ready is not None
        # Second-resolution timestamps: Ready no earlier than the second sshd came up.
        assert ready >= pod.status.start_time + timedelta(seconds=SSHD_STARTS - 1)
        assert launcher.metadata.creation_timestamp >= ready
    config = jobs.core.read_namespaced_config_map("ssh-config", jobs.namespace).data
    ns = jobs.namespace
    assert config["discover_hosts.sh"] == (
        f"#!/bin/sh\necho ssh-worker-0.ssh.{ns}.svc\necho ssh-worker-1.ssh.{ns}.svc\n")


# -- 2. WaitForWorkersReady on resume (#615) -------------------------------------------------


def gated_suspended(name: str) -> dict[str, Any]:
    """A suspended WaitForWorkersReady job whose workers cannot be scheduled (a scheduling
    gate) so they stay Pending, never Ready."""
    body = small_job(name, workers=2, launcher_runs="600s", launcherCreationPolicy=WFWR,
                     run_policy={"suspend": True})
    template(body, "Worker")["spec"]["schedulingGates"] = [
        {"name": "test.mpi-controller.io/hold"}]
    return body


def resume(jobs: MPIJobs, name: str) -> None:
    jobs.wait_condition(name, "Suspended")
    assert launcher_job(jobs, name).spec.suspend is True  # created at once, suspended
    jobs.patch(name, {"spec": {"runPolicy": {"suspend": False}}})
    wait_for(lambda: len(jobs.workers(name)) == 2, timeout=30, what="the workers")


def test_upstream_resumes_the_launcher_while_no_worker_is_ready(
        jobs: MPIJobs, start: Any) -> None:
    start()
    jobs.create(gated_suspended("resumed"))
    resume(jobs, "resumed")
    wait_for(lambda: launcher_job(jobs, "resumed").spec.suspend is False, timeout=30,
             what="the launcher to be resumed")
    assert all(ready_since(p) is None for p in jobs.workers("resumed"))
    wait_for(lambda: jobs.pods("training.kubeflow.org/job-role=launcher"), timeout=30,
             what="a launcher pod (mpirun) before any worker is ready")


def test_with_the_gate_the_resumed_launcher_waits_for_the_workers(
        jobs: MPIJobs, start: Any) -> None:
    controller = start(launcher_waits_on_resume=True)
    jobs.create(gated_suspended("held"))
    resume(jobs, "held")
    wait_for(controller.idle, timeout=30, what="the controller to be idle")
    assert launcher_job(jobs, "held").spec.suspend is True
    assert jobs.pods("training.kubeflow.org/job-role=launcher") == []
    for pod in jobs.workers("held"):
        jobs.core.patch_namespaced_pod(pod.metadata.name, jobs.namespace,
                                       {"spec": {"schedulingGates": None}})
    wait_for(lambda: launcher_job(jobs, "held").spec.suspend is False, timeout=60,
             what="the launcher to be resumed once the workers are ready")
    launcher_start = wait_for(lambda: launcher_job(jobs, "held").status.start_time,
                              timeout=30, what="the launcher Job to start")
    for pod in jobs.workers("held"):
        ready = ready_since(pod)
        assert ready is not None
        assert ready <= launcher_start
    jobs.wait_condition("held", "Running", timeout=60)


# -- 3. TTL of the whole MPIJob (#644) -------------------------------------------------------


def ttl_job(name: str) -> dict[str, Any]:
    return small_job(name, workers=1, launcher_runs="2s",
                     run_policy={"ttlSecondsAfterFinished": 3})


def gone(fn: Any) -> bool:
    try:
        fn()
    except client.ApiException as err:
        return err.status == 404
    return False


def test_upstream_ttl_deletes_only_the_launcher_job(jobs: MPIJobs, start: Any) -> None:
    controller = start()
    jobs.create(ttl_job("keep"))
    jobs.wait_condition("keep", "Succeeded", timeout=60)
    wait_for(lambda: launcher_job(jobs, "keep") is None, timeout=60,
             what="the Job TTL controller to delete the launcher Job")
    wait_for(controller.idle, timeout=30, what="the controller to be idle")
    assert jobs.get("keep")["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    assert jobs.core.read_namespaced_config_map("keep-config", jobs.namespace) is not None


def test_with_the_annotation_the_ttl_deletes_the_mpijob_and_everything_it_owns(
        jobs: MPIJobs, start: Any) -> None:
    start()
    jobs.create(annotate(ttl_job("drop"), **{TTL_DELETES_ANNOTATION: "MPIJob"}))
    launcher = wait_for(lambda: launcher_job(jobs, "drop"), timeout=30, what="the launcher")
    assert launcher.spec.ttl_seconds_after_finished is None
    done = jobs.wait_condition("drop", "Succeeded", timeout=60)
    wait_for(lambda: gone(lambda: jobs.get("drop")), timeout=30, what="the MPIJob deleted")
    wait_for(lambda: gone(lambda: jobs.core.read_namespaced_config_map(
        "drop-config", jobs.namespace)), timeout=60, what="its ConfigMap collected")
    wait_for(lambda: launcher_job(jobs, "drop") is None, timeout=60, what="its launcher")
    deleted, = [e for e in jobs.core.list_namespaced_event(
        jobs.namespace, field_selector="involvedObject.name=drop").items
        if e.reason == "SuccessfulDeleteJob"]
    assert (deleted.type, deleted.message) == ("Normal", "Deleted job: drop")
    expiry = parse_time(done["status"]["completionTime"]) + timedelta(seconds=3)
    assert deleted.first_timestamp >= expiry


# -- 4. eviction (#647) and cleanPodPolicy All (#643) ----------------------------------------


def evict(jobs: MPIJobs, pod: str) -> None:
    """What the kubelet writes for a pod it evicts under node pressure."""
    jobs.core.patch_namespaced_pod_status(pod, jobs.namespace, {"status": {
        "phase": "Failed", "reason": "Evicted",
        "message": "The node was low on resource: memory."}})


def evicted(jobs: MPIJobs, name: str) -> dict[str, Any]:
    jobs.create(small_job(name, workers=2, launcher_runs="600s",
                          run_policy={"ttlSecondsAfterFinished": 4}))
    jobs.wait_condition(name, "Running", timeout=60)
    evict(jobs, f"{name}-worker-1")
    job = jobs.wait_condition(name, "Failed", timeout=60)
    failed = next(x for x in job["status"]["conditions"] if x["type"] == "Failed")
    assert (failed["reason"], failed["message"]) == ("MPIJobEvicted", "1/2 workers are evicted")
    return job


def test_upstream_leaves_an_evicted_job_running(jobs: MPIJobs, start: Any) -> None:
    controller = start()
    job = evicted(jobs, "ev")
    assert "completionTime" not in job["status"]
    wait_for(controller.idle, timeout=30, what="the controller to be idle")
    worker = jobs.core.read_namespaced_pod("ev-worker-0", jobs.namespace)
    assert worker.status.phase == "Running"
    assert worker.metadata.deletion_timestamp is None
    launcher = launcher_job(jobs, "ev")
    assert not launcher.spec.suspend
    assert launcher.status.active == 1


def test_with_the_gate_an_evicted_job_is_cleaned_up_and_its_ttl_applies(
        jobs: MPIJobs, start: Any) -> None:
    start(clean_up_evicted_jobs=True)
    job = evicted(jobs, "evc")
    assert job["status"]["completionTime"]
    wait_for(lambda: gone(lambda: jobs.core.read_namespaced_pod("evc-worker-0",
                                                                jobs.namespace)),
             timeout=60, what="the running worker deleted (cleanPodPolicy Running)")
    wait_for(lambda: not jobs.pods("training.kubeflow.org/job-role=launcher"), timeout=60,
             what="the launcher pod gone (its Job suspended)")
    wait_for(lambda: launcher_job(jobs, "evc") is None, timeout=60,
             what="the launcher Job deleted by the TTL")
    assert jobs.get("evc")["status"]["replicaStatuses"]["Worker"] == {}


def all_policy_job(name: str) -> dict[str, Any]:
    return small_job(name, workers=1, launcher_runs="2s", run_policy={"cleanPodPolicy": "All"})


def test_upstream_clean_pod_policy_all_keeps_the_launcher_pod(
        jobs: MPIJobs, start: Any) -> None:
    controller = start()
    jobs.create(all_policy_job("all"))
    jobs.wait_condition("all", "Succeeded", timeout=60)
    wait_for(lambda: not jobs.workers("all"), timeout=60, what="the workers deleted")
    wait_for(controller.idle, timeout=30, what="the controller to be idle")
    launchers = jobs.pods("training.kubeflow.org/job-role=launcher")
    assert [p.status.phase for p in launchers] == ["Succeeded"]


def test_with_the_gate_clean_pod_policy_all_deletes_the_launcher_pod(
        jobs: MPIJobs, start: Any) -> None:
    start(clean_pod_policy_all_launcher=True)
    jobs.create(all_policy_job("alll"))
    jobs.wait_condition("alll", "Succeeded", timeout=60)
    wait_for(lambda: not jobs.workers("alll"), timeout=60, what="the workers deleted")
    wait_for(lambda: not jobs.pods("training.kubeflow.org/job-role=launcher"), timeout=60,
             what="the launcher pod deleted")
    assert launcher_job(jobs, "alll").status.succeeded == 1  # the Job and its outcome stay


# -- 5. failure details (#90) ----------------------------------------------------------------


def oom_job(name: str) -> dict[str, Any]:
    """Workers OOMKilled after 1 s; the launcher's mpirun then exits 1 (backoffLimit 0)."""
    body = small_job(name, workers=2, run_policy={"backoffLimit": 0})
    template(body, "Worker")["metadata"]["annotations"].update(
        {EXIT_CODE: "137", EXIT_REASON: "OOMKilled", DURATION: "1s"})
    template(body, "Launcher")["metadata"]["annotations"].update(
        {EXIT_CODE: "1", DURATION: "4s"})
    return body


def failed_condition(jobs: MPIJobs, name: str) -> dict[str, Any]:
    job = jobs.wait_condition(name, "Failed", timeout=90)
    return next(x for x in job["status"]["conditions"] if x["type"] == "Failed")


def test_upstream_failure_names_only_the_launcher_job(jobs: MPIJobs, start: Any) -> None:
    start()
    jobs.create(oom_job("oom"))
    failed = failed_condition(jobs, "oom")
    assert (failed["reason"], failed["message"]) == (
        "BackoffLimitExceeded/", "Job has reached the specified backoff limit: ")


def test_with_the_gate_the_failure_names_the_oom_killed_workers(
        jobs: MPIJobs, start: Any) -> None:
    start(failure_details=True)
    jobs.create(oom_job("oomd"))
    failed = failed_condition(jobs, "oomd")
    launcher_pod, = jobs.pods("training.kubeflow.org/job-role=launcher")
    assert failed["reason"] == "BackoffLimitExceeded/"
    assert failed["message"] == (
        "Job has reached the specified backoff limit: ; failed: "
        "worker pod oomd-worker-0: container worker terminated with exit code 137 (OOMKilled); "
        "worker pod oomd-worker-1: container worker terminated with exit code 137 (OOMKilled); "
        f"launcher pod {launcher_pod.metadata.name}: container launcher terminated with exit "
        "code 1 (Error)")
    assert ("Warning", failed["reason"], failed["message"]) in jobs.events("oomd")


# -- 6. job metrics (#808) -------------------------------------------------------------------


@pytest.fixture
def process(cluster: Cluster, namespace: str, mpijob_crd: str, tmp_path: Any,
            ) -> Iterator[Any]:
    """``process(*flags)``: ``mpi-controller run`` on the test's namespace (no leader
    election), its /metrics scraped by the test."""
    started: list[ControllerProcess] = []

    def run(*flags: str) -> ControllerProcess:
        proc = ControllerProcess(cluster.kubeconfig, tmp_path / "controller.log",
                                 "--namespace", namespace, "--no-leader-elect", *flags)
        proc.start()
        started.append(proc)
        wait_for(lambda: "caches synced" in proc.log() or not proc.alive(), timeout=60,
                 what="the controller to sync its caches")
        assert proc.alive(), proc.log()
        return proc

    yield run
    for proc in started:
        assert proc.stop() == 0, proc.log()[-3000:]


def samples(proc: ControllerProcess, family: str) -> dict[frozenset[tuple[str, str]], float]:
    status, text = http_get(proc.monitoring_port, "/metrics")
    assert status == 200, text
    return {frozenset(s.labels.items()): s.value
            for f in text_string_to_metric_families(text) for s in f.samples
            if s.name == family}


def job_then_next(jobs: MPIJobs) -> None:
    """Job "first" runs to success and is deleted; once job "next" is Created the controller
    has seen the deletion (one informer, events in order)."""
    jobs.create(small_job("first", workers=1))
    jobs.wait_condition("first", "Succeeded", timeout=60)
    jobs.delete("first")
    jobs.create(small_job("next", workers=1, launcher_runs="600s"))
    jobs.wait_condition("next", "Created", timeout=60)


def info(namespace: str, job: str) -> frozenset[tuple[str, str]]:
    return frozenset({("launcher", f"{job}-launcher"), ("namespace", namespace)})


def test_upstream_job_info_outlives_its_job(jobs: MPIJobs, process: Any) -> None:
    proc = process()
    job_then_next(jobs)
    job_info = samples(proc, "mpi_operator_job_info")
    assert job_info[info(jobs.namespace, "first")] == 1.0  # a series per job, forever
    assert samples(proc, "mpi_operator_job_duration_seconds_count") == {}
    assert samples(proc, "mpi_operator_jobs") == {}


def test_with_the_gate_series_follow_jobs_and_durations_are_observed(
        jobs: MPIJobs, process: Any) -> None:
    proc = process("--feature-gates", "JobMetrics=true")
    job_then_next(jobs)
    ns = jobs.namespace
    wait_for(lambda: info(ns, "first") not in samples(proc, "mpi_operator_job_info"),
             timeout=30, what="the deleted job's series to go")
    assert info(ns, "next") in samples(proc, "mpi_operator_job_info")
    durations = samples(proc, "mpi_operator_job_duration_seconds_count")
    assert durations == {frozenset({("namespace", ns), ("result", "Succeeded")}): 1.0}
    phases = {dict(k)["phase"]: v for k, v in samples(proc, "mpi_operator_jobs").items()
              if dict(k)["namespace"] == ns}
    assert phases.get("Succeeded") == 0.0  # "first" counted, then forgotten
    assert sum(phases.values()) == 1.0  # "next", Created or Running
