"""Gang scheduling of a TrainJob as Trainer v2.3.0's ``CoScheduling`` and ``Volcano`` plugins
(``pkg/runtime/framework/plugins/coscheduling/coscheduling.go``, ``.../volcano/volcano.go``)
make it: the pods' label or annotation, and the PodGroup (minMember the pod sets' counts,
minResources count times one pod's requests, ``resourcehelpers.PodRequests``)."""

from __future__ import annotations

import copy
from typing import Any

from mpi_controller.kube.quantity import parse_quantity
from mpi_controller.trainjob.build import desired_objects
from mpi_controller.trainjob.podgroups import pod_requests

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def rjob(name: str, step: str | None, *containers: dict[str, Any], parallelism: int = 1,
         **pod: Any) -> dict[str, Any]:
    meta = {"labels": {ANCESTOR: step}} if step else {}
    return {"name": name, "replicas": 1, "template": {"metadata": meta, "spec": {
        "parallelism": parallelism, "template": {"spec": {"containers": list(containers),
                                                          **pod}}}}}


def node(cpu: str, memory: str) -> dict[str, Any]:
    return {"name": "node", "image": "x", "resources": {"requests": {"cpu": cpu,
                                                                     "memory": memory}}}


RUNTIME = {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [
    rjob("dataset-initializer", "dataset-initializer",
         {"name": "dataset-initializer", "image": "d",
          "resources": {"requests": {"cpu": "500m"}}}),
    rjob("node", "trainer", node("2", "1Gi"), priorityClassName="high"),
]}}}


def trainjob(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "pi", "namespace": "ns", "uid": "u-1"},
            "spec": {"runtimeRef": {"name": "r"}, "suspend": False, **spec}}


OWNER = [{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "pi",
          "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]


def pods(jobset: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["template"]["spec"]["template"] for r in jobset["spec"]["replicatedJobs"]]


def test_coscheduling_labels_the_pods_and_sizes_the_group_by_the_trainjob() -> None:
    """minMember 1 + 3 (numNodes), minResources 500m + 3 x 4 CPUs (the TrainJob's
    resourcesPerNode merged into the node container) and 3 x 1Gi; the policy's timeout."""
    runtime = copy.deepcopy(RUNTIME)
    runtime["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    desired = desired_objects(trainjob(trainer={"numNodes": 3, "resourcesPerNode": {
        "requests": {"cpu": "4"}}}), runtime)
    assert desired.pod_group == {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
        "metadata": {"name": "pi", "namespace": "ns", "ownerReferences": OWNER},
        "spec": {"minMember": 4, "minResources": {"cpu": "12500m", "memory": "3Gi"},
                 "scheduleTimeoutSeconds": 120}}
    assert [p["metadata"]["labels"] for p in pods(desired.jobset)] == [
        {"scheduling.x-k8s.io/pod-group": "pi"}] * 2
    assert all("annotations" not in p["metadata"] for p in pods(desired.jobset))


def test_volcano_annotates_the_pods_with_queue_priority_and_topology() -> None:
    runtime = copy.deepcopy(RUNTIME)
    runtime["podGroupPolicy"] = {"volcano": {"networkTopology": {
        "mode": "hard", "highestTierAllowed": 2}}}
    runtime["template"]["metadata"] = {"annotations": {"scheduling.volcano.sh/queue-name": "q"}}
    desired = desired_objects(trainjob(), runtime)
    assert desired.pod_group == {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "pi", "namespace": "ns", "ownerReferences": OWNER},
        "spec": {"minMember": 2, "minResources": {"cpu": "2500m", "memory": "1Gi"},
                 "queue": "q", "priorityClassName": "high",
                 "networkTopology": {"mode": "hard", "highestTierAllowed": 2}}}
    assert [p["metadata"]["annotations"] for p in pods(desired.jobset)] == [
        {"scheduling.k8s.io/group-name": "pi"}] * 2
    assert desired.jobset["metadata"]["annotations"] == {"scheduling.volcano.sh/queue-name": "q"}


def test_coscheduling_timeout_defaults_and_no_policy_no_group() -> None:
    runtime = copy.deepcopy(RUNTIME)
    runtime["podGroupPolicy"] = {"coscheduling": {}}
    group = desired_objects(trainjob(), runtime).pod_group
    assert group is not None
    assert group["spec"]["scheduleTimeoutSeconds"] == 60
    assert desired_objects(trainjob(), RUNTIME).pod_group is None


def test_one_pods_requests_count_init_containers_and_sidecars() -> None:
    """``PodRequests``: containers summed; each init container with the sidecars started
    before it, where larger; sidecars (restartPolicy Always) added to the pod."""
    requests = pod_requests(
        [{"resources": {"requests": {"cpu": "1", "memory": "100Mi"}}}],
        [{"resources": {"requests": {"cpu": "3"}}},
         {"restartPolicy": "Always", "resources": {"requests": {"memory": "50Mi"}}},
         {"resources": {"requests": {"memory": "200Mi"}}}])
    assert {k: str(v) for k, v in requests.items()} == {"cpu": "3", "memory": "250Mi"}
    assert parse_quantity("250Mi") == requests["memory"]
