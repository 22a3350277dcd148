"""Pods and headless Services per replica index (training-operator common/pod.go,
common/service.go, core/*.go; kubeflow/common v0.4.1 GenLabels)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mpi_controller.engine.training.api import ReplicaSpec, replica_specs
from mpi_controller.engine.training.gang import gang_scheduler
from mpi_controller.engine.training.replicas import (
    by_type,
    general_name,
    indexed_by_type,
    indexed_slices,
    job_labels,
    new_pod,
    new_service,
    replica_selector,
    service_ports,
    slices,
)

JOB = {"metadata": {"name": "j", "namespace": "ns", "uid": "U"}}
REF = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "j", "uid": "U",
       "controller": True, "blockOwnerDeletion": True}


def spec(rtype: str = "Worker", **template: Any) -> ReplicaSpec:
    return ReplicaSpec(rtype=rtype, replicas=2, restart_policy="ExitCode",
                       template=template or {"spec": {"containers": [
                           {"name": "tensorflow", "image": "i"}]}})


def pod(rt: str, index: str | None, name: str = "p") -> dict[str, Any]:
    labels = {"training.kubeflow.org/replica-type": rt}
    if index is not None:
        labels["training.kubeflow.org/replica-index"] = index
    return {"metadata": {"name": name, "labels": labels}}


def no_cluster_spec(template: dict[str, Any], rtype: str, index: int) -> None:
    template["spec"]["containers"][0]["env"] = [{"name": "AT", "value": f"{rtype}/{index}"}]


def test_names_and_labels() -> None:
    assert general_name("a/b", "PS", 3) == "a-b-ps-3"
    assert job_labels("j", "tfjob-controller") == {
        "group-name": "kubeflow.org", "job-name": "j",
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/job-name": "j"}
    assert replica_selector("j", "pytorchjob-controller", "Worker") == (
        "group-name=kubeflow.org,job-name=j,training.kubeflow.org/job-name=j,"
        "training.kubeflow.org/operator-name=pytorchjob-controller,"
        "training.kubeflow.org/replica-type=worker")


def test_slices_size_is_replicas_or_highest_index_plus_one() -> None:
    pods = [pod("worker", "0", "a"), pod("worker", "3", "b"), pod("worker", "0", "c"),
            pod("worker", "x", "d"), pod("worker", None, "e"), pod("worker", "-1", "f")]
    buckets = slices(pods, 2)
    assert [[p["metadata"]["name"] for p in b] for b in buckets] == [["a", "c"], [], [], ["b"]]
    assert [len(b) for b in slices([], 3)] == [0, 0, 0]
    assert [p["metadata"]["name"] for p in by_type(
        [pod("ps", "0", "a"), pod("worker", "0", "b")], "PS")] == ["a"]


labels = st.sampled_from(["ps", "worker", "Worker", "chief", None, 3])
indexes = st.sampled_from(["0", "1", "2", "5", "x", "-1", "", None, 1])


@given(st.lists(st.tuples(labels, indexes), max_size=12), st.integers(0, 4))
def test_one_pass_grouping_gives_the_slices_of_each_replica_type(
        objs: list[tuple[Any, Any]], replicas: int) -> None:
    """The reconcile reads each pod's labels once for every replica type; the buckets are
    those of by_type then slices, objects in the same order."""
    pods = [pod(rtype, index, f"p{n}") for n, (rtype, index) in enumerate(objs)]
    grouped = indexed_by_type(pods)
    for rtype in ("PS", "Worker", "Chief", "Master"):
        assert (indexed_slices(grouped.get(rtype.lower(), ()), replicas)
                == slices(by_type(pods, rtype), replicas))


def test_a_pod_is_the_template_with_labels_cluster_spec_and_restart_policy() -> None:
    replica = spec(metadata={"name": "ignored", "labels": {"team": "a",
                                                          "group-name": "overridden"},
                             "annotations": {"x": "y"}, "finalizers": ["f"]},
                   spec={"containers": [{"name": "tensorflow", "image": "i"}],
                         "restartPolicy": "Always"})
    built = new_pod(JOB, replica, 1, controller_name="tfjob-controller", owner_ref=REF,
                    master_role=True, cluster_spec=no_cluster_spec, gang=None)
    assert built == {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": "j-worker-1", "namespace": "ns",
            "labels": {"team": "a", "group-name": "kubeflow.org", "job-name": "j",
                       "training.kubeflow.org/operator-name": "tfjob-controller",
                       "training.kubeflow.org/job-name": "j",
                       "training.kubeflow.org/replica-type": "worker",
                       "training.kubeflow.org/replica-index": "1",
                       "training.kubeflow.org/job-role": "master"},
            "annotations": {"x": "y"}, "finalizers": ["f"], "ownerReferences": [REF]},
        "spec": {"containers": [{"name": "tensorflow", "image": "i",
                                 "env": [{"name": "AT", "value": "Worker/1"}]}],
                 "restartPolicy": "Never"}}
    assert "env" not in replica.template["spec"]["containers"][0]


def test_gang_decoration_keeps_a_set_scheduler_name() -> None:
    volcano = gang_scheduler("Volcano")
    assert volcano is not None
    built = new_pod(JOB, spec("PS"), 0, controller_name="c", owner_ref=REF, master_role=False,
                    cluster_spec=lambda *_: None, gang=volcano)
    assert built["spec"]["schedulerName"] == "volcano"
    assert built["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "j",
                                                "volcano.sh/task-spec": "ps"}
    plugins = gang_scheduler("sp")
    assert plugins is not None
    own = spec(spec={"containers": [{"name": "tensorflow", "image": "i"}],
                     "schedulerName": "mine"})
    built = new_pod(JOB, own, 0, controller_name="c", owner_ref=REF, master_role=False,
                    cluster_spec=lambda *_: None, gang=plugins)
    assert built["spec"]["schedulerName"] == "mine"
    assert built["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "j"


def test_services_expose_every_port_of_the_default_container() -> None:
    job = {"spec": {"tfReplicaSpecs": {"PS": {"template": {"spec": {"containers": [
        {"name": "side", "ports": [{"name": "s", "containerPort": 1}]},
        {"name": "tensorflow", "ports": [{"name": "tfjob-port", "containerPort": 2222},
                                         {"name": "extra", "containerPort": 8080},
                                         {"name": "extra", "containerPort": 8081},
                                         {"name": "bad", "containerPort": "x"}]}]}}}}}}
    ps = replica_specs(job, "tfReplicaSpecs")["PS"]
    ports = service_ports(ps, "tensorflow")
    assert ports == [{"name": "tfjob-port", "port": 2222}, {"name": "extra", "port": 8081}]
    assert service_ports(ps, "pytorch") is None
    assert new_service(JOB, ps, 0, controller_name="tfjob-controller", owner_ref=REF,
                       ports=ports or []) == {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "j-ps-0", "namespace": "ns",
                     "labels": {**job_labels("j", "tfjob-controller"),
                                "training.kubeflow.org/replica-type": "ps",
                                "training.kubeflow.org/replica-index": "0"},
                     "ownerReferences": [REF]},
        "spec": {"clusterIP": "None",
                 "selector": {**job_labels("j", "tfjob-controller"),
                              "training.kubeflow.org/replica-type": "ps",
                              "training.kubeflow.org/replica-index": "0"},
                 "ports": [{"name": "tfjob-port", "port": 2222},
                           {"name": "extra", "port": 8081}]}}
