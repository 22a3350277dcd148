"""The JAXJob v1 API: ``SetDefaults_JAXJob`` (training-operator v1.9 ``jax_defaults.go``) and
the validating webhook's checks and messages (``pkg/webhooks/jax/jaxjob_webhook.go`` and its
test table)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.jax import parse_jaxjob, set_defaults, validate, validate_update
from tests.unit.jax.jaxjobs import EXAMPLES, example, jaxjob, replica

DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
           "with an alphabetic character, and end with an alphanumeric character (e.g. "
           "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def messages(job: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(job)]


def containers(job: dict[str, Any], rtype: str = "Worker") -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = job["spec"]["jaxReplicaSpecs"][rtype]["template"]["spec"][
        "containers"]
    return result


# -- defaults ---------------------------------------------------------------------------------


def test_defaults_of_a_bare_worker() -> None:
    """SetDefaults_JAXJob: cleanPodPolicy None, replicas 1, restartPolicy Never, the port
    jaxjob-port 6666 appended to the jax container; the input is not changed."""
    job = jaxjob("j", {"Worker": replica(None)})
    original = copy.deepcopy(job)
    out = set_defaults(job)
    assert job == original
    assert out["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    worker = out["spec"]["jaxReplicaSpecs"]["Worker"]
    assert (worker["replicas"], worker["restartPolicy"]) == (1, "Never")
    assert containers(out) == [{"name": "jax", "image": replica()["template"]["spec"][
        "containers"][0]["image"], "ports": [{"name": "jaxjob-port", "containerPort": 6666}]}]
    assert set(out["spec"]) == {"runPolicy", "jaxReplicaSpecs"}


@pytest.mark.parametrize(("key", "renamed"), [
    ("worker", "Worker"), ("WORKER", "Worker"), ("wOrKeR", "Worker"), ("Worker", "Worker"),
    ("Launcher", "Launcher")])
def test_the_worker_key_is_camel_cased(key: str, renamed: str) -> None:
    """setJAXTypeNamesToCamelCase: a key equal to Worker but for case becomes Worker; other
    keys are kept (and defaulted alike)."""
    out = set_defaults(jaxjob("j", {key: replica(2)}))
    assert list(out["spec"]["jaxReplicaSpecs"]) == [renamed]
    assert out["spec"]["jaxReplicaSpecs"][renamed]["restartPolicy"] == "Never"


def test_the_port_goes_to_the_jax_container_else_the_first() -> None:
    """setJAXDefaultPort: getDefaultContainerIndex picks the container named jax (index 1
    here), else index 0."""
    job = jaxjob("j", {"Worker": replica(1)})
    containers(job).insert(0, {"name": "sidecar", "image": "s"})
    out = set_defaults(job)
    assert "ports" not in containers(out)[0]
    assert containers(out)[1]["ports"] == [{"name": "jaxjob-port", "containerPort": 6666}]
    containers(job).pop(1)
    assert containers(set_defaults(job))[0]["ports"] == [
        {"name": "jaxjob-port", "containerPort": 6666}]


def test_set_values_are_kept() -> None:
    """A named jaxjob-port, replicas, restartPolicy and cleanPodPolicy given by the user win;
    another port is kept and the default one appended after it."""
    job = jaxjob("j", {"Worker": replica(3, restart="OnFailure", port=1234)},
                 run_policy={"cleanPodPolicy": "All"})
    out = set_defaults(job)
    worker = out["spec"]["jaxReplicaSpecs"]["Worker"]
    assert (worker["replicas"], worker["restartPolicy"]) == (3, "OnFailure")
    assert containers(out)[0]["ports"] == [{"name": "jaxjob-port", "containerPort": 1234}]
    assert out["spec"]["runPolicy"] == {"cleanPodPolicy": "All"}
    containers(job)[0]["ports"] = [{"name": "metrics", "containerPort": 9090}]
    assert containers(set_defaults(job))[0]["ports"] == [
        {"name": "metrics", "containerPort": 9090},
        {"name": "jaxjob-port", "containerPort": 6666}]


def test_parse_reads_the_defaulted_job() -> None:
    view = parse_jaxjob(set_defaults({**jaxjob("j", {"Worker": replica(4)}),
                                      "metadata": {"name": "j", "namespace": "n"}}))
    assert (view.name, view.namespace, view.total_replicas) == ("j", "n", 4)
    assert view.worker is not None
    assert view.worker.restart_policy == "Never"
    assert view.run_policy.clean_pod_policy == "None"


@pytest.mark.parametrize("bad", [None, [], {"jaxReplicaSpecs": {"Worker": None}},
                                 {"jaxReplicaSpecs": {"Worker": {"template": []}}},
                                 {"jaxReplicaSpecs": []}])
def test_defaults_never_raise(bad: Any) -> None:
    set_defaults({"metadata": {"name": "x"}, "spec": bad})


# -- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLES)
def test_upstreams_examples_are_valid(name: str) -> None:
    """examples/jax/ (upstream's, verbatim) pass the webhook as written and once defaulted."""
    assert validate(example(name)) == []
    assert validate(set_defaults(example(name))) == []


INVALID: list[tuple[str, dict[str, Any], list[str]]] = [
    ("jaxJob name does not meet DNS1035", jaxjob("0-test", {"Worker": replica(1)}),
     [f'metadata.name: Invalid value: "0-test": should match: {DNS1035}']),
    ("no containers",
     jaxjob("test", {"Worker": {"template": {"spec": {"containers": []}}}}),
     ["spec.jaxReplicaSpecs[Worker].template.spec.containers: Required value: must be "
      "specified",
      "spec.jaxReplicaSpecs[Worker].template.spec.containers: Required value: must have at "
      "least one container with name jax"]),
    ("image is empty",
     jaxjob("test", {"Worker": {"template": {"spec": {"containers": [
         {"name": "jax", "image": ""}]}}}}),
     ["spec.jaxReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must "
      "be required"]),
    ("jaxJob default container name doesn't present",
     jaxjob("test", {"Worker": {"template": {"spec": {"containers": [
         {"name": "", "image": "gcr.io/kubeflow-ci/jaxjob-dist-spmd-mnist_test:1.0"}]}}}}),
     ["spec.jaxReplicaSpecs[Worker].template.spec.containers: Required value: must have at "
      "least one container with name jax"]),
    ("replicaSpec is nil", {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob",
                            "metadata": {"name": "test"}, "spec": {}},
     ["spec.jaxReplicaSpecs: Required value: must be required"]),
    ("another replica type, each check in order",
     jaxjob("test", {"Worker": replica(1), "Master": {"template": {"spec": {"containers": [
         {"name": "main"}]}}}}),
     ['spec.jaxReplicaSpecs[Master]: Unsupported value: "Master": supported values: "Worker"',
      "spec.jaxReplicaSpecs[Master].template.spec.containers[0].image: Required value: must "
      "be required",
      "spec.jaxReplicaSpecs[Master].template.spec.containers: Required value: must have at "
      "least one container with name jax"]),
    ("a lower-case worker as submitted (the webhook sees it before the defaults)",
     jaxjob("test", {"worker": replica(1)}),
     ['spec.jaxReplicaSpecs[worker]: Unsupported value: "worker": supported values: '
      '"Worker"']),
]


@pytest.mark.parametrize(("case", "job", "expected"), INVALID, ids=[c[0] for c in INVALID])
def test_upstreams_webhook_table(case: str, job: dict[str, Any], expected: list[str]) -> None:
    """TestValidateV1JAXJob's cases (and two more), with the full messages of field.Error."""
    assert messages(job) == expected


def test_every_error_at_once_in_upstreams_order() -> None:
    """Name first, then each replica type in the order written: type, containers, images,
    the jax container."""
    job = jaxjob("Bad_Name", {"Evaluator": {"template": {"spec": {}}}, "Worker": replica(1)})
    containers(job)[0].update(name="main", image="")
    assert messages(job) == [
        f'metadata.name: Invalid value: "Bad_Name": should match: {DNS1035}',
        'spec.jaxReplicaSpecs[Evaluator]: Unsupported value: "Evaluator": supported values: '
        '"Worker"',
        "spec.jaxReplicaSpecs[Evaluator].template.spec.containers: Required value: must be "
        "specified",
        "spec.jaxReplicaSpecs[Evaluator].template.spec.containers: Required value: must have "
        "at least one container with name jax",
        "spec.jaxReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must "
        "be required",
        "spec.jaxReplicaSpecs[Worker].template.spec.containers: Required value: must have at "
        "least one container with name jax"]


def test_an_empty_replica_map_passes() -> None:
    """Upstream checks ``rSpecs == nil``: ``jaxReplicaSpecs: {}`` decodes to an empty map and
    passes (the CRD only requires the field)."""
    assert validate(jaxjob("test", {})) == []


@pytest.mark.parametrize("manager", ["", "example.com/other", "kueue.x-k8s.io/multikueue",
                                     "kubeflow.org/training-operator"])
def test_managed_by_is_not_checked(manager: str) -> None:
    """validateJAXJob never calls ValidateRunPolicy: any runPolicy.managedBy is admitted (the
    TFJob and PyTorchJob webhooks refuse unknown ones)."""
    assert validate(jaxjob("test", {"Worker": replica(1)},
                           run_policy={"managedBy": manager})) == []


def test_an_update_is_judged_as_the_new_job_alone() -> None:
    """ValidateUpdate runs validateJAXJob on the new object: managedBy may change (no
    ValidateRunPolicyUpdate), the new job's own errors are reported."""
    old = jaxjob("a", {"Worker": replica(1)})
    new = jaxjob("a", {"Worker": replica(1)},
                 run_policy={"managedBy": "kueue.x-k8s.io/multikueue"})
    assert validate_update(old, new) == []
    assert validate_update(new, old) == []
    broken = jaxjob("a", {"Worker": {"template": {"spec": {"containers": [
        {"name": "jax"}]}}}})
    assert [str(e) for e in validate_update(old, broken)] == [
        "spec.jaxReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must "
        "be required"]
    assert validate_update(broken, old) == []
