"""The TFJob kind against a real API server and KWOK: the controller in-process, watching one
namespace (``--enable-scheme tfjob``), each test its own namespace. What training-operator
v1.9 does (``pkg/controller.v1/tensorflow/tfjob_controller.go`` and the common engine's
``pkg/controller.v1/common/job.go``) for each run policy, restart policy and gang
scheduler, observed through the official client."""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from typing import Any

import pytest
from kubernetes import client

from tests.controller_harness import InProcessController, training_controller
from tests.integration.test_controller import _install_pod_group_crd
from tests.support import Cluster, wait_for
from tests.tfjobs import (
    DURATION,
    EXIT_CODE,
    TFJobs,
    condition,
    dense_config,
    names,
    replica,
    tfjob,
    wait_pods,
)

pytestmark = pytest.mark.cluster
LONG = {DURATION: "600s"}


def tf_controller(cluster: Cluster, namespace: str,
                  **training: Any) -> AbstractContextManager[InProcessController]:
    return training_controller(cluster.kubeconfig, namespace, "tfjob", **training)


@pytest.fixture
def jobs(kube_api: Any, namespace: str, tfjob_crd: str) -> TFJobs:
    return TFJobs(kube_api, namespace)


def test_chief_worker_evaluator_and_ps_with_custom_ports(cluster: Cluster,
                                                         jobs: TFJobs) -> None:
    """Every replica type with its own tfjob-port: exact TF_CONFIG in each pod, the port on each
    Service; the chief's pod has the master role and its success ends the job."""
    body = tfjob("cwep", {"Chief": replica(1, port=3333),
                          "Worker": replica(2, port=4444, annotations=LONG),
                          "Evaluator": replica(1), "PS": replica(1, port=5555)})
    ports = {"chief": 3333, "worker": 4444, "ps": 5555}
    cluster_spec = {"chief": 1, "worker": 2, "evaluator": 1, "ps": 1}
    with tf_controller(cluster, jobs.namespace):
        jobs.create(body)
        job = jobs.wait_condition("cwep", "Succeeded", timeout=90)
        pods = jobs.pods("cwep")
        assert names(pods) == ["cwep-chief-0", "cwep-evaluator-0", "cwep-ps-0",
                               "cwep-worker-0", "cwep-worker-1"]
        for pod in pods:
            rt, index = pod["metadata"]["name"].split("-")[1:]
            env = pod["spec"]["containers"][0]["env"]
            assert env == [{"name": "TF_CONFIG", "value": dense_config(
                "cwep", jobs.namespace, cluster_spec, rt, int(index), ports)}]
            role = pod["metadata"]["labels"].get("training.kubeflow.org/job-role")
            assert role == ("master" if rt == "chief" else None)
        for service in jobs.services("cwep"):
            rt = service["metadata"]["name"].split("-")[1]
            assert [(p["name"], p["port"]) for p in service["spec"]["ports"]] == [
                ("tfjob-port", ports.get(rt, 2222))]
        assert [c["type"] for c in job["status"]["conditions"]] == [
            "Created", "Running", "Succeeded"]
        wait_for(lambda: jobs.get("cwep")["status"]["replicaStatuses"] == {
            "Chief": {"succeeded": 1}, "Evaluator": {"succeeded": 1}, "PS": {"succeeded": 1},
            "Worker": {"succeeded": 2}}, timeout=30, what="active replicas counted as succeeded")


def test_exit_code_retryable_restarts_and_permanent_fails(cluster: Cluster,
                                                          jobs: TFJobs) -> None:
    """ExitCode: exit 137 deletes the pod and creates it again (Restarting); exit 1 fails the
    job with upstream's message."""
    retry = tfjob("retry", {"Worker": replica(1, restart="ExitCode",
                                              annotations={EXIT_CODE: "137", DURATION: "1s"})})
    permanent = tfjob("perm", {"PS": replica(1), "Worker": replica(
        1, restart="ExitCode", annotations={EXIT_CODE: "1", DURATION: "1s"})})
    with tf_controller(cluster, jobs.namespace):
        jobs.create(retry)
        jobs.create(permanent)
        first = wait_pods(jobs, "retry", 1)[0]["metadata"]["uid"]
        restarting = jobs.watch_condition("retry", "Restarting", timeout=60)
        wait_for(lambda: [p for p in jobs.pods("retry") if p["metadata"]["uid"] != first],
                 timeout=60, what="the restarted pod")
        message = "job retry is restarting because Worker replica(s) failed."
        cond = next(c for c in restarting["status"]["conditions"] if c["type"] == "Restarting")
        assert (cond["reason"], cond["message"]) == ("TFJobRestarting", message)
        wanted = {("Warning", "TFJobRestarting", message),
                  ("Normal", "ExitedWithCode",
                   f"Pod: {jobs.namespace}.retry-worker-0 exited with code 137"),
                  ("Normal", "SuccessfulDeletePod", "Deleted pod: retry-worker-0")}
        wait_for(lambda: wanted <= set(jobs.events("retry")), timeout=30,
                 what="the restart's events")
        job = jobs.wait_condition("perm", "Failed", timeout=60)
        failed = condition(jobs, "perm", "Failed")
        assert (failed["reason"], failed["message"]) == (
            "TFJobFailed", 'job "perm" is failing because "Worker" replica(s) failed.')
        assert job["status"]["completionTime"]
        assert [p["status"]["phase"] for p in jobs.pods("perm")] == ["Running", "Failed"]
        wait_for(lambda: ("Normal", "TFJobFailed",
                          f"TFJob {jobs.namespace}/perm has failed because 1 Worker replica(s) "
                          "failed.") in jobs.events("perm"), timeout=30, what="the event")


def test_backoff_limit_fails_the_job_and_deletes_its_pods(cluster: Cluster, jobs: TFJobs,
                                                          kube_api: Any) -> None:
    """OnFailure: the kubelet restarts a crashing container in place; the restart counts of
    the Running pods reach backoffLimit 2 and the job fails, every pod and Service deleted.
    (KWOK has no in-place restarts: the test writes the restart count as a kubelet would.)"""
    core = client.CoreV1Api(kube_api)
    with tf_controller(cluster, jobs.namespace):
        jobs.create(tfjob("backoff", {"PS": replica(1), "Worker": replica(
            1, restart="OnFailure", annotations=LONG)}, run_policy={"backoffLimit": 2}))
        wait_pods(jobs, "backoff", 2, "Running")
        pod = core.read_namespaced_pod_status("backoff-worker-0", jobs.namespace)
        statuses = pod.status.container_statuses
        statuses[0].restart_count = 2
        core.patch_namespaced_pod_status("backoff-worker-0", jobs.namespace, {
            "status": {"containerStatuses": [core.api_client.sanitize_for_serialization(s)
                                             for s in statuses]}})
        jobs.wait_condition("backoff", "Failed", timeout=60)
        failed = condition(jobs, "backoff", "Failed")
        assert failed["message"] == ("Job backoff has failed because it has reached the "
                                     "specified backoff limit")
        wait_for(lambda: not jobs.pods("backoff") and not jobs.services("backoff"),
                 timeout=60, what="every pod and Service deleted")


def test_active_deadline_fails_a_running_job(cluster: Cluster, jobs: TFJobs) -> None:
    """Nothing changes while the job runs; it fails at activeDeadlineSeconds all the same (the
    controller syncs it again at the deadline)."""
    with tf_controller(cluster, jobs.namespace):
        jobs.create(tfjob("deadline", {"PS": replica(1), "Worker": replica(1, annotations=LONG)},
                          run_policy={"activeDeadlineSeconds": 6}))
        wait_pods(jobs, "deadline", 2, "Running")
        job = jobs.wait_condition("deadline", "Failed", timeout=60)
        failed = condition(jobs, "deadline", "Failed")
        assert failed["message"] == ("Job deadline has failed because it was active longer "
                                     "than specified deadline")
        start = job["status"]["startTime"]
        assert job["status"]["completionTime"] >= start
        wait_for(lambda: not jobs.pods("deadline"), timeout=60, what="pods deleted")


def test_ttl_deletes_the_finished_job(cluster: Cluster, jobs: TFJobs) -> None:
    with tf_controller(cluster, jobs.namespace):
        jobs.create(tfjob("ttl", {"Worker": replica(1)},
                          run_policy={"ttlSecondsAfterFinished": 3}))
        jobs.wait_condition("ttl", "Succeeded", timeout=60)
        done = time.monotonic()

        def gone() -> bool:
            try:
                jobs.get("ttl")
            except client.ApiException as err:
                return err.status == 404
            return False

        wait_for(gone, timeout=30, what="the TFJob deleted after its TTL")
        assert time.monotonic() - done >= 1.5
        wait_for(lambda: ("Normal", "SuccessfulDeleteJob", "Deleted job: ttl") in jobs.events(
            "ttl"), timeout=30, what="the SuccessfulDeleteJob event")


@pytest.mark.parametrize(("policy", "kept"), [
    ("All", []),
    ("Running", ["cpp-chief-0"]),
    ("None", ["cpp-chief-0", "cpp-evaluator-0", "cpp-ps-0", "cpp-worker-0", "cpp-worker-1"]),
])
def test_clean_pod_policy(cluster: Cluster, jobs: TFJobs, policy: str, kept: list[str]) -> None:
    """The chief finishes (and decides success) while the workers, the PS and the evaluator
    still run: All deletes every pod, Running the running ones, None nothing; each deleted
    pod's Service goes with it."""
    body = tfjob("cpp", {"Chief": replica(1), "Worker": replica(2, annotations=LONG),
                         "PS": replica(1), "Evaluator": replica(1)},
                 run_policy={"cleanPodPolicy": policy})
    with tf_controller(cluster, jobs.namespace):
        jobs.create(body)
        jobs.wait_condition("cpp", "Succeeded", timeout=90)
        wait_for(lambda: names(jobs.pods("cpp")) == kept, timeout=60,
                 what=f"the pods cleanPodPolicy {policy} keeps")
        wait_for(lambda: names(jobs.services("cpp")) == kept, timeout=60,
                 what=f"the Services cleanPodPolicy {policy} keeps")
        expected = sorted({"cpp-chief-0", "cpp-evaluator-0", "cpp-ps-0", "cpp-worker-0",
                           "cpp-worker-1"} - set(kept))

        def deleted() -> list[str]:  # Events are written asynchronously
            return sorted(m.split(": ")[1] for _, r, m in jobs.events("cpp")
                          if r == "SuccessfulDeletePod")
        wait_for(lambda: deleted() == expected, timeout=30, what="a deletion event per pod")


def test_suspend_then_resume(cluster: Cluster, jobs: TFJobs) -> None:
    with tf_controller(cluster, jobs.namespace):
        jobs.create(tfjob("sus", {"PS": replica(1), "Worker": replica(1, annotations=LONG)}))
        wait_pods(jobs, "sus", 2, "Running")
        started = jobs.wait_condition("sus", "Running", timeout=30)["status"]["startTime"]
        time.sleep(1.1)  # startTime has one-second precision: a resume must show a new one
        jobs.patch("sus", {"spec": {"runPolicy": {"suspend": True}}})
        jobs.wait_condition("sus", "Suspended", timeout=60)
        wait_for(lambda: not jobs.pods("sus") and not jobs.services("sus"), timeout=60,
                 what="pods and Services deleted")
        assert jobs.conditions("sus") == [("Created", "True", "TFJobCreated"),
                                          ("Running", "False", "TFJobSuspended"),
                                          ("Suspended", "True", "TFJobSuspended")]
        assert jobs.get("sus")["status"]["replicaStatuses"] == {"PS": {}, "Worker": {}}
        jobs.patch("sus", {"spec": {"runPolicy": {"suspend": False}}})
        jobs.wait_condition("sus", "Running", timeout=60)
        wait_pods(jobs, "sus", 2, "Running")
        status = jobs.get("sus")["status"]
        assert status["startTime"] > started
        assert [c for c in jobs.conditions("sus") if c[0] == "Suspended"] == [
            ("Suspended", "False", "TFJobResumed")]
        wait_for(lambda: ("Normal", "TFJobResumed", "TFJob sus is resumed.") in jobs.events("sus"),
                 timeout=30, what="the TFJobResumed event")
        assert jobs.events("sus").count(
            ("Normal", "TFJobSuspended", "TFJob sus is suspended.")) == 1


def test_a_job_managed_by_multikueue_is_left_alone(cluster: Cluster, jobs: TFJobs) -> None:
    with tf_controller(cluster, jobs.namespace) as ctl:
        jobs.create(tfjob("kueue", {"Worker": replica(1)},
                          run_policy={"managedBy": "kueue.x-k8s.io/multikueue"}))
        jobs.create(tfjob("ours", {"Worker": replica(1)},
                          run_policy={"managedBy": "kubeflow.org/training-operator"}))
        jobs.wait_condition("ours", "Succeeded", timeout=60)
        wait_for(ctl.idle, timeout=30, what="the controller to be idle")
        assert "status" not in jobs.get("kueue")
        assert jobs.pods("kueue") == []
        assert jobs.events("kueue") == []


def test_volcano_pod_group_gates_the_pods(cluster: Cluster, jobs: TFJobs, kube_api: Any) -> None:
    """--gang-scheduler-name volcano: the PodGroup (minMember, queue, priorityClassName,
    minResources) first; no pod until Volcano admits the group (phase Inqueue, written here as
    Volcano would); then the pods name volcano and their group and task."""
    _install_pod_group_crd(kube_api, "scheduling.volcano.sh", "v1beta1")
    custom = client.CustomObjectsApi(kube_api)
    ns = jobs.namespace
    body = tfjob("vc", {"PS": replica(1), "Worker": replica(2)}, run_policy={
        "schedulingPolicy": {"queue": "research", "priorityClass": "high"}})
    for spec in body["spec"]["tfReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500m"}}
    with tf_controller(cluster, ns, gang_scheduler_name="volcano") as ctl:
        jobs.create(body)
        group = wait_for(lambda: _pod_group(custom, "scheduling.volcano.sh", "v1beta1", ns),
                         timeout=30, what="the Volcano PodGroup")
        assert group["spec"] == {"minMember": 3, "queue": "research",
                                 "priorityClassName": "high", "minResources": {"cpu": "1500m"}}
        assert group["metadata"]["ownerReferences"][0]["kind"] == "TFJob"
        wait_for(ctl.idle, timeout=30, what="the controller to be idle")
        assert jobs.pods("vc") == []
        assert jobs.get("vc")["status"]["lastReconcileTime"]
        custom.patch_namespaced_custom_object_status(
            "scheduling.volcano.sh", "v1beta1", ns, "podgroups", "vc",
            {"status": {"phase": "Inqueue"}})
        pods = wait_pods(jobs, "vc", 3)
        for pod in pods:
            rt = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
            assert pod["spec"]["schedulerName"] == "volcano"
            assert pod["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "vc",
                                                      "volcano.sh/task-spec": rt}


def test_scheduler_plugins_pod_group(cluster: Cluster, jobs: TFJobs, kube_api: Any) -> None:
    _install_pod_group_crd(kube_api, "scheduling.x-k8s.io", "v1alpha1")
    custom = client.CustomObjectsApi(kube_api)
    ns = jobs.namespace
    body = tfjob("sp", {"Worker": replica(2)}, run_policy={"schedulingPolicy": {
        "minAvailable": 2, "minResources": {"cpu": "2"}, "scheduleTimeoutSeconds": 60}})
    with tf_controller(cluster, ns, gang_scheduler_name="scheduler-plugins-scheduler"):
        jobs.create(body)
        group = wait_for(lambda: _pod_group(custom, "scheduling.x-k8s.io", "v1alpha1", ns),
                         timeout=30, what="the scheduler-plugins PodGroup")
        assert group["spec"] == {"minMember": 2, "minResources": {"cpu": "2"},
                                 "scheduleTimeoutSeconds": 60}
        for pod in wait_pods(jobs, "sp", 2):
            assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
            assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "sp"


def _pod_group(custom: Any, group: str, version: str, ns: str) -> dict[str, Any] | None:
    items: list[dict[str, Any]] = custom.list_namespaced_custom_object(
        group, version, ns, "podgroups")["items"]
    return items[0] if items else None
