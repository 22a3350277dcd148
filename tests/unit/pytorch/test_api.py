"""The PyTorchJob v1 API: SetDefaults_PyTorchJob and the validating webhook's checks, messages
and warnings (training-operator v1.9 pytorch_defaults.go, pkg/webhooks/pytorch)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.pytorch import (
    ElasticPolicy,
    parse_pytorchjob,
    set_defaults,
    validate,
    validate_update,
    validation_warnings,
)
from tests.pytorchjobs import pytorchjob, replica, simple


def messages(job: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(job)]


def test_defaults_of_the_issues_manifest() -> None:
    job = simple()
    original = copy.deepcopy(job)
    out = set_defaults(job)
    assert job == original
    assert out["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    assert out["spec"]["nprocPerNode"] == "auto"
    assert "elasticPolicy" not in out["spec"]
    for spec in out["spec"]["pytorchReplicaSpecs"].values():
        assert (spec["replicas"], spec["restartPolicy"]) == (1, "OnFailure")
        assert spec["template"]["spec"]["containers"][0]["ports"] == [
            {"name": "pytorchjob-port", "containerPort": 23456}]


def test_camel_case_replica_types_and_default_replicas() -> None:
    job = pytorchjob("j", {"MASTER": replica(None), "worker": replica(None, restart="Never")})
    job["spec"]["pytorchReplicaSpecs"]["worker"]["template"]["spec"]["containers"].insert(
        0, {"name": "side", "image": "s"})
    specs = set_defaults(job)["spec"]["pytorchReplicaSpecs"]
    assert list(specs) == ["Master", "Worker"]
    assert (specs["Master"]["replicas"], specs["Master"]["restartPolicy"]) == (1, "OnFailure")
    assert (specs["Worker"]["replicas"], specs["Worker"]["restartPolicy"]) == (1, "Never")
    side, pytorch = specs["Worker"]["template"]["spec"]["containers"]
    assert "ports" not in side
    assert pytorch["ports"] == [{"name": "pytorchjob-port", "containerPort": 23456}]


@pytest.mark.parametrize(("policy", "low", "high"), [
    ({}, 3, 3),
    ({"minReplicas": 2}, 2, 2),
    ({"maxReplicas": 5}, 5, 5),
    ({"minReplicas": 1, "maxReplicas": 4}, 1, 4),
])
def test_elastic_policy_min_and_max_are_filled(policy: dict[str, Any], low: int,
                                               high: int) -> None:
    out = set_defaults(pytorchjob("j", {"Worker": replica(3)}, elastic=policy))
    assert (out["spec"]["elasticPolicy"]["minReplicas"],
            out["spec"]["elasticPolicy"]["maxReplicas"]) == (low, high)
    assert out["spec"]["nprocPerNode"] == "auto"


def test_elastic_without_a_worker_is_left_for_validation() -> None:
    out = set_defaults(pytorchjob("j", {"Master": replica(1)}, elastic={}))
    assert out["spec"]["elasticPolicy"] == {}
    assert messages(out) == ["spec.pytorchReplicaSpecs[Worker]: Required value: must be "
                             "configured if elastic policy is used"]


def test_deprecated_elastic_nproc_per_node_keeps_nproc_per_node_unset() -> None:
    out = set_defaults(pytorchjob("j", {"Worker": replica(2)}, elastic={"nProcPerNode": 4}))
    assert "nprocPerNode" not in out["spec"]
    assert validation_warnings(out) == [
        "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"]
    assert messages(out) == []
    both = pytorchjob("j", {"Worker": replica(2)}, elastic={"nProcPerNode": 4},
                      nprocPerNode="2")
    assert set_defaults(both)["spec"]["nprocPerNode"] == "2"
    assert messages(both) == ["spec.elasticPolicy.nProcPerNode: Forbidden: must not be used "
                              "with spec.nprocPerNode"]
    assert validation_warnings(simple()) == []


def test_a_set_nproc_per_node_and_policies_are_kept() -> None:
    out = set_defaults(pytorchjob("j", {"Worker": replica(1, port=1234)}, nprocPerNode="gpu",
                                  run_policy={"cleanPodPolicy": "All"}))
    assert out["spec"]["nprocPerNode"] == "gpu"
    assert out["spec"]["runPolicy"]["cleanPodPolicy"] == "All"
    assert out["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "ports"] == [{"name": "pytorchjob-port", "containerPort": 1234}]


@pytest.mark.parametrize("bad", [None, [], {"pytorchReplicaSpecs": {"Worker": None}},
                                 {"pytorchReplicaSpecs": {"Worker": {"template": []}}},
                                 {"pytorchReplicaSpecs": [], "elasticPolicy": {}},
                                 {"elasticPolicy": "x", "nprocPerNode": 3}])
def test_defaults_and_validation_never_raise(bad: Any) -> None:
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"},
           "spec": bad}
    out = set_defaults(job)
    assert validate(out)
    parse_pytorchjob(out)


def test_the_issues_manifest_is_valid() -> None:
    assert validate(set_defaults(simple())) == []
    assert validate(simple()) == []


def test_replica_checks_with_upstreams_messages() -> None:
    job = pytorchjob("j", {"Master": replica(2), "Worker": replica(0), "Chief": replica(1)})
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = [
        {"name": "main"}]
    assert messages(job) == [
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image: Required value: "
        "must be required",
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must have "
        "at least one container with name pytorch",
        "spec.pytorchReplicaSpecs[Worker].replicas: Forbidden: must be at least 1",
        'spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief": supported values: '
        '"Master", "Worker"',
    ]


def test_a_master_without_replicas_is_rejected_as_submitted_but_not_once_defaulted() -> None:
    """Upstream's webhook sees the job as submitted: an unset Master replicas fails there."""
    job = pytorchjob("j", {"Master": replica(None), "Worker": replica(None)})
    assert messages(job) == ["spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"]
    assert messages(set_defaults(job)) == []


def test_containers_and_specs_are_required() -> None:
    job = pytorchjob("j", {"Worker": replica(1)})
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] = []
    assert messages(job) == [
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must be "
        "specified",
        "spec.pytorchReplicaSpecs[Worker].template.spec.containers: Required value: must have "
        "at least one container with name pytorch"]
    none = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"},
            "spec": {"elasticPolicy": {}}}
    assert messages(none) == [
        "spec.pytorchReplicaSpecs[Worker]: Required value: must be configured if elastic "
        "policy is used",
        "spec.pytorchReplicaSpecs: Required value: must be required"]


def test_name_and_managed_by() -> None:
    job = pytorchjob("1-Bad", {"Worker": replica(1)}, run_policy={"managedBy": "me"})
    assert messages(job) == [
        'metadata.name: Invalid value: "1-Bad": should match: a DNS-1035 label must consist of '
        "lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.runPolicy.managedBy: Unsupported value: "me": supported values: '
        '"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"']


def test_managed_by_is_immutable_on_update() -> None:
    """Upstream's ValidateUpdate compares the new job with itself (never fires); this one
    compares with the old job."""
    old = pytorchjob("j", {"Worker": replica(1)})
    new = copy.deepcopy(old)
    new["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    assert [str(e) for e in validate_update(old, new)] == [
        'spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is '
        "immutable"]
    assert validate_update(new, new) == []


def test_the_typed_view() -> None:
    job = set_defaults(pytorchjob("j", {"Master": replica(1), "Worker": replica(3)}, elastic={
        "rdzvBackend": "etcd", "rdzvPort": 1, "rdzvHost": "h", "rdzvId": "id",
        "rdzvConf": [{"key": "a", "value": "1"}, {"key": "b"}], "standalone": True,
        "maxRestarts": 7, "metrics": [{"type": "Resource"}]}, nprocPerNode="4"))
    job["metadata"]["namespace"] = "ns"
    view = parse_pytorchjob(job)
    assert (view.name, view.namespace, view.nproc_per_node, view.total_replicas) == (
        "j", "ns", "4", 4)
    assert view.master is not None
    assert view.worker is not None
    assert view.elastic_policy == ElasticPolicy(
        min_replicas=3, max_replicas=3, rdzv_backend="etcd", rdzv_port=1, rdzv_host="h",
        rdzv_id="id", rdzv_conf=(("a", "1"), ("b", "")), standalone=True, nproc_per_node=None,
        max_restarts=7, metrics=[{"type": "Resource"}])
