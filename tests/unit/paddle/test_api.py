"""The PaddleJob v1 API: SetDefaults_PaddleJob (training-operator v1.9
paddlepaddle_defaults.go) and the validating webhook's checks and messages
(pkg/webhooks/paddlepaddle/paddlepaddle_webhook.go and its test table)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.paddle import (
    ElasticPolicy,
    parse_paddlejob,
    set_defaults,
    validate,
    validate_update,
)
from tests.unit.paddle.jobs import IMAGE, paddlejob, replica, simple_cpu, simple_gpu

SPECS = "spec.paddleReplicaSpecs"


def messages(job: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(job)]


# -- defaults ------------------------------------------------------------------------------


def test_defaults_of_the_cpu_example() -> None:
    """SetDefaults_PaddleJob: cleanPodPolicy None; the example's own replicas, restart policy and
    `master` port 37777 are kept (no second port is added); nothing else appears."""
    job = simple_cpu()
    original = copy.deepcopy(job)
    out = set_defaults(job)
    assert job == original
    assert out["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    assert list(out["spec"]) == ["paddleReplicaSpecs", "runPolicy"]
    worker = out["spec"]["paddleReplicaSpecs"]["Worker"]
    assert (worker["replicas"], worker["restartPolicy"]) == (2, "OnFailure")
    assert worker["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 37777, "name": "master"}]


def test_replicas_restart_policy_and_port_defaults() -> None:
    """setDefaultReplicas 1, PaddleJobDefaultRestartPolicy OnFailure, and setPaddleDefaultPort
    {name: master, containerPort: 36543} on the container named paddle (not on the first one
    when paddle is not first)."""
    job = paddlejob("j", {"Master": replica(None), "Worker": replica(None, restart="Never")})
    job["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"]["containers"].insert(
        0, {"name": "side", "image": "s"})
    specs = set_defaults(job)["spec"]["paddleReplicaSpecs"]
    assert (specs["Master"]["replicas"], specs["Master"]["restartPolicy"]) == (1, "OnFailure")
    assert (specs["Worker"]["replicas"], specs["Worker"]["restartPolicy"]) == (1, "Never")
    assert specs["Master"]["template"]["spec"]["containers"][0]["ports"] == [
        {"name": "master", "containerPort": 36543}]
    side, paddle = specs["Worker"]["template"]["spec"]["containers"]
    assert "ports" not in side
    assert paddle["ports"] == [{"name": "master", "containerPort": 36543}]


def test_default_port_goes_to_the_first_container_without_a_paddle_one() -> None:
    """getDefaultContainerIndex falls back to container 0 when none is named paddle."""
    job = paddlejob("j", {"Worker": {"template": {"spec": {"containers": [
        {"name": "a", "image": "i", "ports": [{"name": "http", "containerPort": 80}]},
        {"name": "b", "image": "i"}]}}}})
    a, b = set_defaults(job)["spec"]["paddleReplicaSpecs"]["Worker"]["template"]["spec"][
        "containers"]
    assert a["ports"] == [{"name": "http", "containerPort": 80},
                          {"name": "master", "containerPort": 36543}]
    assert "ports" not in b


def test_replica_types_are_camel_cased() -> None:
    """setPaddleTypeNamesToCamelCase: MASTER and worker become Master and Worker."""
    job = paddlejob("j", {"MASTER": replica(1), "worker": replica(3)})
    specs = set_defaults(job)["spec"]["paddleReplicaSpecs"]
    assert sorted(specs) == ["Master", "Worker"]
    assert specs["Worker"]["replicas"] == 3


def test_a_set_clean_pod_policy_is_kept() -> None:
    """SetDefaults_PaddleJob sets cleanPodPolicy only when it is nil; the rest of runPolicy is
    kept."""
    out = set_defaults(paddlejob("j", {"Worker": replica(1)},
                                 run_policy={"cleanPodPolicy": "All", "backoffLimit": 3}))
    assert out["spec"]["runPolicy"] == {"cleanPodPolicy": "All", "backoffLimit": 3}


@pytest.mark.parametrize(("policy", "low", "high"), [
    ({}, 3, 3),
    ({"minReplicas": 2}, 2, 2),
    ({"maxReplicas": 5}, 5, 5),
    ({"minReplicas": 1, "maxReplicas": 4}, 1, 4),
    ({"minReplicas": 4, "maxReplicas": 1}, 4, 1),
])
def test_elastic_policy_min_and_max_are_filled(policy: dict[str, Any], low: int,
                                               high: int) -> None:
    """setPaddleElasticPolicy: both set are kept (not checked against each other); one set is
    copied to the other; none set takes the Worker's replicas for both."""
    out = set_defaults(paddlejob("j", {"Worker": replica(3)}, elastic=policy))
    assert out["spec"]["elasticPolicy"] == {**policy, "minReplicas": low, "maxReplicas": high}
    assert parse_paddlejob(out).elastic_policy == ElasticPolicy(min_replicas=low,
                                                                max_replicas=high)


def test_elastic_bounds_come_from_the_defaulted_worker_replicas() -> None:
    """SetDefaults_PaddleJob sets the replicas before the elastic policy: an unset Worker
    replicas is 1 by then; maxRestarts and metrics are kept as written."""
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}
    out = set_defaults(paddlejob("j", {"Worker": replica(None)},
                                 elastic={"maxRestarts": 3, "metrics": [metric]}))
    assert out["spec"]["elasticPolicy"] == {"maxRestarts": 3, "metrics": [metric],
                                            "minReplicas": 1, "maxReplicas": 1}
    assert parse_paddlejob(out).elastic_policy == ElasticPolicy(
        min_replicas=1, max_replicas=1, max_restarts=3, metrics=[metric])


def test_elastic_without_a_worker_stays_unset_and_valid() -> None:
    """Upstream dereferences the missing Worker's replicas (the operator panics; its webhook
    accepts the job): here the bounds stay unset and the job is valid."""
    out = set_defaults(paddlejob("j", {"Master": replica(2)}, elastic={}))
    assert out["spec"]["elasticPolicy"] == {}
    assert messages(out) == []


@pytest.mark.parametrize("bad", [None, [], {"paddleReplicaSpecs": {"Worker": None}},
                                 {"paddleReplicaSpecs": {"Worker": {"template": []}}},
                                 {"paddleReplicaSpecs": [], "elasticPolicy": {}},
                                 {"paddleReplicaSpecs": {"Worker": 3}, "elasticPolicy": "x"}])
def test_defaults_and_validation_never_raise(bad: Any) -> None:
    """Malformed jobs are defaulted as far as they go and then refused by validation."""
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PaddleJob", "metadata": {"name": "j"},
           "spec": bad}
    out = set_defaults(job)
    assert validate(out)
    parse_paddlejob(out)


# -- validation ----------------------------------------------------------------------------


def test_the_examples_are_valid() -> None:
    """Upstream's examples pass its webhook, as written and defaulted."""
    for job in (simple_cpu(), simple_gpu()):
        assert validate(job) == []
        assert validate(set_defaults(job)) == []


def test_valid_job_managed_by_the_training_operator() -> None:
    """Test table case "valid paddleJob" (managedBy kubeflow.org/training-operator)."""
    job = paddlejob("test", {"Worker": replica(2, restart="Never", port=37777)},
                    run_policy={"managedBy": "kubeflow.org/training-operator"})
    assert messages(job) == []
    job["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    assert messages(job) == []


def test_name_must_be_a_dns1035_label() -> None:
    """Test table case "paddleJob name does not meet DNS1035"."""
    job = paddlejob("__test", {"Worker": replica(2)})
    assert messages(job) == [
        'metadata.name: Invalid value: "__test": should match: a DNS-1035 label must consist '
        "of lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]


def test_no_containers_gives_two_required_errors() -> None:
    """Test table case "no containers": "must be specified", then no paddle container."""
    job = paddlejob("test", {"Worker": {"template": {"spec": {"containers": []}}}})
    assert messages(job) == [
        f"{SPECS}[Worker].template.spec.containers: Required value: must be specified",
        f"{SPECS}[Worker].template.spec.containers: Required value: must have at least one "
        'container with name "paddle"']


def test_image_is_required() -> None:
    """Test table case "image is empty"."""
    job = paddlejob("test", {"Worker": {"template": {"spec": {"containers": [
        {"name": "paddle", "image": ""}]}}}})
    assert messages(job) == [
        f"{SPECS}[Worker].template.spec.containers[0].image: Required value: must be required"]


def test_a_container_named_paddle_is_required() -> None:
    """Test table case "paddle default container name doesn't find" (%q quotes the name)."""
    job = paddlejob("test", {"Worker": {"template": {"spec": {"containers": [
        {"name": "", "image": "gcr.io/kubeflow-ci/paddle-dist-mnist_test:1.0"}]}}}})
    assert messages(job) == [
        f"{SPECS}[Worker].template.spec.containers: Required value: must have at least one "
        'container with name "paddle"']


@pytest.mark.parametrize("spec", [{}, {"paddleReplicaSpecs": None},
                                  {"paddleReplicaSpecs": "x"}])
def test_replica_specs_are_required(spec: dict[str, Any]) -> None:
    """Test table case "replicaSpec is nil"."""
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PaddleJob", "metadata": {"name": "test"},
           "spec": spec}
    assert messages(job) == [f"{SPECS}: Required value: must be required"]


def test_an_empty_replica_map_passes() -> None:
    """Upstream checks the map for nil only: {} passes the webhook."""
    assert messages(paddlejob("test", {})) == []


def test_unsupported_managed_by_is_refused() -> None:
    """Test table case "attempt to set unsupported managedBy controller name gets rejected"."""
    job = paddlejob("test", {"Worker": replica(2)},
                    run_policy={"managedBy": "other-job-controller"})
    assert messages(job) == [
        'spec.runPolicy.managedBy: Unsupported value: "other-job-controller": supported '
        'values: "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"']


def test_replica_types_other_than_master_and_worker_are_refused_in_order() -> None:
    """validateSpec per replica type: NotSupported first, then the container checks; no check
    of the replica counts (two Masters and zero Workers pass)."""
    job = paddlejob("test", {"Master": replica(2), "Worker": replica(0), "PS": replica(1)})
    job["spec"]["paddleReplicaSpecs"]["PS"]["template"]["spec"]["containers"] = [
        {"name": "main"}]
    assert messages(job) == [
        f'{SPECS}[PS]: Unsupported value: "PS": supported values: "Master", "Worker"',
        f"{SPECS}[PS].template.spec.containers[0].image: Required value: must be required",
        f"{SPECS}[PS].template.spec.containers: Required value: must have at least one "
        'container with name "paddle"']


def test_lower_case_types_are_valid_once_defaulted() -> None:
    """The webhook sees the object as submitted (lower-case keys refused); the controller
    validates the defaulted, camel-cased copy."""
    job = paddlejob("test", {"worker": replica(1)})
    assert messages(job) == [
        f'{SPECS}[worker]: Unsupported value: "worker": supported values: "Master", "Worker"']
    assert messages(set_defaults(job)) == []


def test_errors_of_several_kinds_come_together() -> None:
    """validatePaddleJob: the name, then the run policy, then the replica specs."""
    job = paddlejob("Bad", {"Worker": {"template": {"spec": {"containers": [
        {"name": "paddle"}]}}}}, run_policy={"managedBy": ""})
    assert [e.field for e in validate(job)] == [
        "metadata.name", "spec.runPolicy.managedBy",
        f"{SPECS}[Worker].template.spec.containers[0].image"]


def test_update_keeps_managed_by() -> None:
    """ValidateUpdate compares the old job with the new one (ValidateRunPolicyUpdate):
    managedBy is immutable, set or unset."""
    old = paddlejob("test", {"Worker": replica(2)})
    new = copy.deepcopy(old)
    assert validate_update(old, new) == []
    new["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    assert [str(e) for e in validate_update(old, new)] == [
        'spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is '
        "immutable"]
    assert validate_update(new, copy.deepcopy(new)) == []
    scaled = copy.deepcopy(old)
    scaled["spec"]["paddleReplicaSpecs"]["Worker"]["replicas"] = 5
    assert validate_update(old, scaled) == []


def test_update_checks_the_new_job_like_a_create() -> None:
    """ValidateUpdate runs validateSpec on the new job as ValidateCreate does."""
    old = paddlejob("test", {"Worker": replica(2)})
    new = paddlejob("test", {"Worker": {"template": {"spec": {"containers": [
        {"name": "paddle", "image": IMAGE}, {"name": "x"}]}}}})
    assert [str(e) for e in validate_update(old, new)] == [
        f"{SPECS}[Worker].template.spec.containers[1].image: Required value: must be required"]
