"""The PyTorchJob kind against a real API server, KWOK and the HorizontalPodAutoscaler
controller: the controller in-process, watching one namespace (``--enable-scheme
pytorchjob``), each test its own namespace. What training-operator v1.9 does
(``pkg/controller.v1/pytorch/`` and ``pkg/controller.v1/common/job.go``) for the environment,
elastic training with an HPA scaling the job through its scale subresource, restarts, the
backoff limit, suspension and gang scheduling, observed through the official client."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import pytest
from kubernetes import client

from mpi_controller.runtime.metrics import REGISTRY
from tests.controller_harness import InProcessController, training_controller
from tests.integration.test_controller import _install_pod_group_crd
from tests.pytorchjobs import (
    CPU_METRIC,
    PyTorchJobs,
    init_container,
    master_env,
    pytorchjob,
    replica,
    selector,
)
from tests.support import Cluster, wait_for
from tests.tfjobs import DURATION, EXIT_CODE, condition, names, wait_pods

pytestmark = pytest.mark.cluster
LONG = {DURATION: "600s"}


def pt_controller(cluster: Cluster, namespace: str,
                  **training: Any) -> AbstractContextManager[InProcessController]:
    return training_controller(cluster.kubeconfig, namespace, "pytorchjob", **training)


@pytest.fixture
def jobs(kube_api: Any, namespace: str, pytorchjob_crd: str) -> PyTorchJobs:
    return PyTorchJobs(kube_api, namespace)


def live(objs: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objs if not o["metadata"].get("deletionTimestamp")]


def test_nproc_per_node_four_with_three_workers(cluster: Cluster, jobs: PyTorchJobs) -> None:
    """1 master + 3 workers with nprocPerNode "4": WORLD_SIZE 16 and RANK 0..3 in every
    pod, the init container on each worker; the master finishing ends the job."""
    body = pytorchjob("np", {"Master": replica(1), "Worker": replica(3)}, nprocPerNode="4")
    with pt_controller(cluster, jobs.namespace):
        jobs.create(body)
        jobs.wait_condition("np", "Succeeded", timeout=90)
        pods = jobs.pods("np")
        assert names(pods) == ["np-master-0", "np-worker-0", "np-worker-1", "np-worker-2"]
        for pod in pods:
            rtype, index = pod["metadata"]["name"].split("-")[1:]
            rank = int(index) + (1 if rtype == "worker" else 0)
            pytorch, = pod["spec"]["containers"]
            assert pytorch["env"] == master_env("np", rank=rank, world=16, nnodes="4",
                                                nproc="4")
            init = [{k: v for k, v in c.items() if k not in (
                "terminationMessagePath", "terminationMessagePolicy", "volumeMounts")}
                for c in pod["spec"].get("initContainers") or []]
            assert init == ([init_container("np")] if rtype == "worker" else [])
        assert [c[0] for c in jobs.conditions("np")] == ["Created", "Running", "Succeeded"]


def _elastic(name: str) -> dict[str, Any]:
    return pytorchjob(name, {"Worker": replica(2, annotations=LONG,
                                                resources={"requests": {"cpu": "100m"}})},
                      elastic={"minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_METRIC]})


def test_elastic_job_scaled_with_kubectl_and_by_its_hpa(cluster: Cluster,
                                                        jobs: PyTorchJobs) -> None:
    """The HPA targets the job's scale subresource; ``kubectl scale`` 2 -> 3 -> 1 creates and
    deletes pods and Services by index; scaled to 5, above the HPA's maximum, the HPA
    controller scales it back to 3 through the same subresource."""
    ns = jobs.namespace
    with pt_controller(cluster, ns):
        jobs.create(_elastic("el"))
        wait_pods(jobs, "el", 2, "Running")
        hpa = wait_for(lambda: jobs.hpa("el"), timeout=30, what="the HPA")
        uid = jobs.get("el")["metadata"]["uid"]
        assert hpa["metadata"]["ownerReferences"] == [{
            "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "el", "uid": uid,
            "controller": True, "blockOwnerDeletion": True}]
        assert hpa["spec"] == {
            "scaleTargetRef": {"kind": "PyTorchJob", "name": "el",
                               "apiVersion": "kubeflow.org/v1"},
            "minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_METRIC]}
        scale = wait_for(lambda: (s := jobs.scale("el"))["status"].get("replicas") == 2 and s,
                         timeout=30, what="the scale subresource's two active workers")
        assert (scale["spec"]["replicas"], scale["status"]["replicas"],
                scale["status"]["selector"]) == (2, 2, selector("el", "Worker"))
        for count in (3, 1):
            cluster.kubectl("-n", ns, "scale", "pytorchjob/el", f"--replicas={count}")
            wanted = [f"el-worker-{i}" for i in range(count)]
            wait_for(lambda wanted=wanted: live(jobs.pods("el")) == wanted
                     and live(jobs.services("el")) == wanted, timeout=60,
                     what=f"pods and Services {wanted}")
        wait_for(lambda: jobs.scale("el")["status"].get("replicas") == 1, timeout=30,
                 what="one active worker")
        cluster.kubectl("-n", ns, "scale", "pytorchjob/el", "--replicas=5")
        wait_for(lambda: jobs.get("el")["spec"]["pytorchReplicaSpecs"]["Worker"][
            "replicas"] == 3, timeout=60, what="the HPA scaling the job back to 3")
        wanted = [f"el-worker-{i}" for i in range(3)]
        wait_for(lambda: live(jobs.pods("el")) == wanted and live(jobs.services("el")) == wanted,
                 timeout=60, what="three workers")
        rescale = ("Normal", "SuccessfulRescale",
                   "New size: 3; reason: Current number of replicas above Spec.MaxReplicas")
        hpa_events = client.CoreV1Api(jobs.core.api_client).list_namespaced_event(
            ns, field_selector="involvedObject.kind=HorizontalPodAutoscaler").items
        assert rescale in {(e.type, e.reason, e.message) for e in hpa_events}
        for index in (1, 2):
            assert ("Normal", "SuccessfulCreatePod", f"Created pod: el-worker-{index}") in \
                jobs.events("el")
        # Running pods being deleted by a scale-down count as failed (upstream's rule), so a
        # Restarting condition may pass by; the job neither fails nor finishes.
        assert {c[0] for c in jobs.conditions("el")} <= {"Created", "Running", "Restarting"}


def test_suspend_deletes_the_hpa_and_resume_creates_it_again(cluster: Cluster,
                                                             jobs: PyTorchJobs) -> None:
    with pt_controller(cluster, jobs.namespace):
        jobs.create(_elastic("sus"))
        wait_pods(jobs, "sus", 2, "Running")
        jobs.wait_condition("sus", "Running", timeout=30)
        first = wait_for(lambda: jobs.hpa("sus"), timeout=30, what="the HPA")
        jobs.patch("sus", {"spec": {"runPolicy": {"suspend": True}}})
        jobs.wait_condition("sus", "Suspended", timeout=60)
        wait_for(lambda: jobs.hpa("sus") is None and not jobs.pods("sus")
                 and not jobs.services("sus"), timeout=60,
                 what="the HPA, pods and Services deleted")
        assert jobs.conditions("sus") == [("Created", "True", "PyTorchJobCreated"),
                                          ("Running", "False", "PyTorchJobSuspended"),
                                          ("Suspended", "True", "PyTorchJobSuspended")]
        jobs.patch("sus", {"spec": {"runPolicy": {"suspend": False}}})
        again = wait_for(lambda: jobs.hpa("sus"), timeout=30, what="the HPA created again")
        assert again["metadata"]["uid"] != first["metadata"]["uid"]
        assert again["spec"] == first["spec"]
        wait_pods(jobs, "sus", 2, "Running")
        jobs.wait_condition("sus", "Running", timeout=60)
        assert ("Suspended", "False", "PyTorchJobResumed") in jobs.conditions("sus")


def test_on_failure_restarts_a_failing_worker_and_backoff_limits(
        cluster: Cluster, jobs: PyTorchJobs, kube_api: Any) -> None:
    """A worker exiting 1 under OnFailure is deleted and created again, over and over
    (each restart counted as one by training_operator_jobs_restarted_total, both Warning
    events); backoffLimit 0 fails a job at its first failure; the
    restart counts of running pods reaching backoffLimit 2 fail another (KWOK has no in-place
    restarts: the test writes the count as a kubelet would). Failing jobs lose every pod and
    Service."""
    failing = {EXIT_CODE: "1", DURATION: "1s"}
    core = client.CoreV1Api(kube_api)
    with pt_controller(cluster, jobs.namespace):
        jobs.create(pytorchjob("rs", {"Master": replica(1, annotations=LONG),
                                      "Worker": replica(1, annotations=failing)}))
        jobs.create(pytorchjob("zero", {"Master": replica(1, annotations=LONG),
                                        "Worker": replica(1, annotations=failing)},
                               run_policy={"backoffLimit": 0}))
        jobs.create(pytorchjob("two", {"Master": replica(1, annotations=LONG),
                                       "Worker": replica(1, annotations=LONG)},
                               run_policy={"backoffLimit": 2}))
        seen: set[str] = set()

        def restarted_twice() -> bool:
            seen.update(p["metadata"]["uid"] for p in jobs.pods("rs")
                        if p["metadata"]["name"] == "rs-worker-0")
            return len(seen) >= 3
        wait_for(restarted_twice, timeout=90, what="rs-worker-0 created three times")
        restarted = REGISTRY.get_sample_value("training_operator_jobs_restarted_total", {
            "job_namespace": jobs.namespace, "framework": "pytorch"})
        assert restarted is not None
        assert restarted >= 2
        wanted = {("Warning", "PyTorchJobRestarting",
                   "job rs is restarting because Worker replica(s) failed."),
                  ("Warning", "PyTorchJobRestarting",
                   "PyTorchJob rs is restarting because 1 Worker replica(s) failed."),
                  ("Normal", "ExitedWithCode",
                   f"Pod: {jobs.namespace}.rs-worker-0 exited with code 1"),
                  ("Normal", "SuccessfulDeletePod", "Deleted pod: rs-worker-0")}
        wait_for(lambda: wanted <= set(jobs.events("rs")), timeout=30, what="restart events")
        assert not any(c[0] == "Failed" for c in jobs.conditions("rs"))
        jobs.wait_condition("zero", "Failed", timeout=60)
        assert condition(jobs, "zero", "Failed")["message"] == (
            "Job zero has failed because it has reached the specified backoff limit")
        wait_pods(jobs, "two", 2, "Running")
        pod = core.read_namespaced_pod_status("two-worker-0", jobs.namespace)
        statuses = pod.status.container_statuses
        statuses[0].restart_count = 2
        core.patch_namespaced_pod_status("two-worker-0", jobs.namespace, {
            "status": {"containerStatuses": [core.api_client.sanitize_for_serialization(s)
                                             for s in statuses]}})
        jobs.wait_condition("two", "Failed", timeout=60)
        assert condition(jobs, "two", "Failed")["message"] == (
            "Job two has failed because it has reached the specified backoff limit")
        for name in ("zero", "two"):
            wait_for(lambda name=name: not jobs.pods(name) and not jobs.services(name),
                     timeout=60, what=f"every pod and Service of {name} deleted")
            assert ("Normal", "PyTorchJobFailed", f"Job {name} has failed because it has "
                    "reached the specified backoff limit") in jobs.events(name)


def test_volcano_gang_scheduling(cluster: Cluster, jobs: PyTorchJobs, kube_api: Any) -> None:
    """--gang-scheduler-name volcano: the PodGroup (minMember: every replica, minResources
    summed) first; no pod until Volcano admits it (phase Inqueue, written here as Volcano
    would); then the pods name volcano, their group and their task."""
    _install_pod_group_crd(kube_api, "scheduling.volcano.sh", "v1beta1")
    custom = client.CustomObjectsApi(kube_api)
    ns = jobs.namespace
    body = pytorchjob("vc", {"Master": replica(1), "Worker": replica(2)})
    for spec in body["spec"]["pytorchReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    with pt_controller(cluster, ns, gang_scheduler_name="volcano") as ctl:
        jobs.create(body)

        def group() -> dict[str, Any] | None:
            items: list[dict[str, Any]] = custom.list_namespaced_custom_object(
                "scheduling.volcano.sh", "v1beta1", ns, "podgroups")["items"]
            return items[0] if items else None
        found = wait_for(group, timeout=30, what="the Volcano PodGroup")
        assert found["spec"] == {"minMember": 3, "queue": "default",
                                 "minResources": {"cpu": "3"}}
        assert found["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"
        wait_for(ctl.idle, timeout=30, what="the controller to be idle")
        assert jobs.pods("vc") == []
        custom.patch_namespaced_custom_object_status(
            "scheduling.volcano.sh", "v1beta1", ns, "podgroups", "vc",
            {"status": {"phase": "Inqueue"}})
        for pod in wait_pods(jobs, "vc", 3):
            rt = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
            assert pod["spec"]["schedulerName"] == "volcano"
            assert pod["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "vc",
                                                      "volcano.sh/task-spec": rt}
