"""The TFJob v1 API: SetDefaults_TFJob and the validating webhook's checks and messages
(training-operator v1.9 tensorflow_defaults.go, pkg/webhooks/tensorflow)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.tensorflow import parse_tfjob, set_defaults, validate, validate_update
from tests.tfjobs import example, replica, tfjob


def messages(job: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(job)]


def test_defaults() -> None:
    job = tfjob("j", {"WORKER": replica(None), "ps": replica(2, restart="OnFailure")})
    job["spec"]["tfReplicaSpecs"]["ps"]["template"]["spec"]["containers"].insert(
        0, {"name": "side", "image": "s"})
    original = copy.deepcopy(job)
    out = set_defaults(job)
    assert job == original
    assert out["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    assert out["spec"]["successPolicy"] == ""
    specs = out["spec"]["tfReplicaSpecs"]
    assert list(specs) == ["PS", "Worker"]
    assert (specs["Worker"]["replicas"], specs["Worker"]["restartPolicy"]) == (1, "Never")
    assert (specs["PS"]["replicas"], specs["PS"]["restartPolicy"]) == (2, "OnFailure")
    containers = specs["PS"]["template"]["spec"]["containers"]
    assert "ports" not in containers[0]
    assert containers[1]["ports"] == [{"name": "tfjob-port", "containerPort": 2222}]


def test_default_port_goes_to_the_first_container_without_a_tensorflow_one() -> None:
    job = tfjob("j", {"Worker": replica(1)})
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "m"
    out = set_defaults(job)
    assert out["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "ports"] == [{"name": "tfjob-port", "containerPort": 2222}]


def test_a_set_port_and_policies_are_kept() -> None:
    job = tfjob("j", {"Worker": replica(1, port=9999)}, successPolicy="AllWorkers",
                run_policy={"cleanPodPolicy": "All"})
    out = set_defaults(job)
    assert out["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0][
        "ports"] == [{"name": "tfjob-port", "containerPort": 9999}]
    assert out["spec"]["successPolicy"] == "AllWorkers"
    assert out["spec"]["runPolicy"]["cleanPodPolicy"] == "All"
    view = parse_tfjob(out)
    assert view.all_workers_must_succeed
    assert not view.has_chief_or_master


@pytest.mark.parametrize("bad", [None, [], {"tfReplicaSpecs": {"Worker": None}},
                                 {"tfReplicaSpecs": {"Worker": {"template": []}}}])
def test_defaults_never_raise(bad: Any) -> None:
    set_defaults({"metadata": {"name": "x"}, "spec": bad})


def test_the_example_is_valid() -> None:
    assert validate(example()) == []


def test_every_check_with_upstreams_message() -> None:
    job = tfjob("Bad_Name", {"Worker": replica(1), "Chief": replica(1), "Master": replica(1),
                             "PS": {"template": {"spec": {}}}},
                run_policy={"managedBy": ""})
    workers = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    workers[0].update(name="main", image="")
    assert messages(job) == [
        'metadata.name: Invalid value: "Bad_Name": should match: a DNS-1035 label must consist '
        "of lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.runPolicy.managedBy: Unsupported value: "": supported values: '
        '"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"',
        "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be "
        "required",
        "spec.tfReplicaSpecs[Worker].template.spec.containers: Required value: must have at "
        "least one container with name tensorflow",
        "spec.tfReplicaSpecs[PS].template.spec.containers: Required value: must be specified",
        "spec.tfReplicaSpecs[PS].template.spec.containers: Required value: must have at least "
        "one container with name tensorflow",
        "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role",
    ]


def test_replica_specs_are_required_and_managed_by_is_immutable() -> None:
    assert messages({"metadata": {"name": "a"}, "spec": {}}) == [
        "spec.tfReplicaSpecs: Required value: must be required"]
    old = tfjob("a", {"Worker": replica(1)})
    new = tfjob("a", {"Worker": replica(1)},
                run_policy={"managedBy": "kueue.x-k8s.io/multikueue"})
    assert [str(e) for e in validate_update(old, new)] == [
        'spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is '
        "immutable"]
    assert validate_update(new, new) == []
