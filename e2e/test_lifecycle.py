"""Whole-system runs: the controller as a process, the Job controller, scheduler, garbage
collector and KWOK (which runs the pods) all real."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mpijobs import EXIT_CODE, MPIJobs, example, small_job
from tests.processes import ControllerProcess
from tests.support import wait_for

pytestmark = pytest.mark.cluster


@pytest.fixture
def jobs(kube_api: Any, namespace: str, controller: ControllerProcess) -> MPIJobs:
    return MPIJobs(kube_api, namespace)


def _names(items: list[Any]) -> list[str]:
    return sorted(i.metadata.name for i in items)


def test_pi_example_succeeds(jobs: MPIJobs) -> None:
    """examples/pi.yaml runs to Succeeded; the Running workers are then deleted
    (cleanPodPolicy Running) and the status says so."""
    body = example("pi.yaml")
    jobs.create(body)
    job = jobs.wait_condition("pi", "Succeeded", timeout=120)
    status = job["status"]
    assert [c["type"] for c in status["conditions"]] == ["Created", "Running", "Succeeded"]
    assert [c["status"] for c in status["conditions"]] == ["True", "False", "True"]
    assert status["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    assert status["completionTime"]
    wait_for(lambda: not jobs.workers("pi"), timeout=60, what="workers to be cleaned up")
    # Events are written asynchronously (the recorder's queue), so they may trail the status.
    wanted = {"MPIJobCreated", "MPIJobRunning", "MPIJobSucceeded"}
    wait_for(lambda: wanted <= {r for _, r, _ in jobs.events("pi")}, timeout=30,
             what=f"the events {sorted(wanted)}")


def test_launcher_failure_fails_the_job(jobs: MPIJobs) -> None:
    body = small_job("crash", run_policy={"backoffLimit": 1})
    launcher = body["spec"]["mpiReplicaSpecs"]["Launcher"]
    launcher["template"]["metadata"]["annotations"][EXIT_CODE] = "1"
    launcher["template"]["metadata"]["annotations"]["sim.mpi-controller.io/duration"] = "500ms"
    jobs.create(body)
    job = jobs.wait_condition("crash", "Failed", timeout=120)
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"].startswith("BackoffLimitExceeded")
    assert job["status"]["replicaStatuses"]["Launcher"]["failed"] == 2  # backoffLimit 1 => 2 tries
    assert ("Warning", failed["reason"]) in [(t, r) for t, r, _ in jobs.events("crash")]


def test_suspended_on_create_then_resumed_succeeds(jobs: MPIJobs) -> None:
    jobs.create(small_job("sus", run_policy={"suspend": True}))
    job = jobs.wait_condition("sus", "Suspended", timeout=60)
    assert "startTime" not in job["status"]
    launcher = jobs.batch.read_namespaced_job("sus-launcher", jobs.namespace)
    assert launcher.spec.suspend is True
    assert jobs.workers("sus") == []
    jobs.patch("sus", {"spec": {"runPolicy": {"suspend": False}}})
    job = jobs.wait_condition("sus", "Succeeded", timeout=120)
    conds = {c["type"]: (c["status"], c["reason"]) for c in job["status"]["conditions"]}
    assert conds["Suspended"] == ("False", "MPIJobResumed")
    assert job["status"]["startTime"]


@pytest.mark.parametrize(("policy", "left"), [("Running", 0), ("All", 0), ("None", 2)])
def test_clean_pod_policy(jobs: MPIJobs, policy: str, left: int) -> None:
    name = f"clean-{policy.lower()}"
    jobs.create(small_job(name, run_policy={"cleanPodPolicy": policy}))
    jobs.wait_condition(name, "Succeeded", timeout=120)
    if left:
        # None keeps the workers: still there, still Running, well after success.
        with pytest.raises(AssertionError):
            wait_for(lambda: len(jobs.workers(name)) != left, timeout=5, what="workers to change")
        assert {p.status.phase for p in jobs.workers(name)} == {"Running"}
    else:
        wait_for(lambda: len(jobs.workers(name)) == 0, timeout=60, what="workers to be deleted")
    # The launcher pod is never deleted by the controller.
    assert len(jobs.pods(f"training.kubeflow.org/job-name={name},"
                         "training.kubeflow.org/job-role=launcher")) == 1


def test_deleting_the_mpijob_removes_every_child(jobs: MPIJobs) -> None:
    jobs.create(small_job("gc", launcher_runs="600s"))
    jobs.wait_condition("gc", "Running", timeout=90)
    jobs.delete("gc")
    ns = jobs.namespace

    def nothing_left() -> bool:
        names = {
            *(j.metadata.name for j in jobs.batch.list_namespaced_job(ns).items),
            *(s.metadata.name for s in jobs.core.list_namespaced_service(ns).items),
            *(c.metadata.name for c in jobs.core.list_namespaced_config_map(ns).items),
            *(s.metadata.name for s in jobs.core.list_namespaced_secret(ns).items),
        }
        return not jobs.workers("gc") and not names & {"gc-launcher", "gc", "gc-config", "gc-ssh"}

    wait_for(nothing_left, timeout=90, what="the garbage collector to remove every child")


def test_controller_killed_mid_job_converges_without_duplicates(
    jobs: MPIJobs, controller: ControllerProcess
) -> None:
    jobs.create(small_job("crashy", workers=4, launcher_runs="8s"))
    wait_for(lambda: len(jobs.workers("crashy")) >= 1, timeout=60, what="the first worker")
    # Kill only once the Created condition and its event are persisted: a kill before that
    # rightly makes the next controller record MPIJobCreated itself.
    jobs.wait_condition("crashy", "Created", timeout=60)
    wait_for(lambda: "MPIJobCreated" in [r for _, r, _ in jobs.events("crashy")], timeout=30,
             what="the MPIJobCreated event")
    first = {p.metadata.name: p.metadata.uid for p in jobs.workers("crashy")}
    controller.kill()
    controller.start()
    job = jobs.wait_condition("crashy", "Succeeded", timeout=180)
    assert job["status"]["replicaStatuses"]["Launcher"] == {"succeeded": 1}
    # Workers that existed before the kill were kept, not recreated.
    launchers = jobs.batch.list_namespaced_job(jobs.namespace).items
    assert _names(launchers).count("crashy-launcher") == 1
    events = jobs.events("crashy")
    assert [r for _, r, _ in events].count("MPIJobCreated") == 1
    assert not [e for e in events if e[1] == "ErrResourceExists"]
    for name, uid in first.items():
        pods = [p for p in jobs.workers("crashy") if p.metadata.name == name]
        assert not pods or pods[0].metadata.uid == uid
