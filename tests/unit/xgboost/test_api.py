"""The XGBoostJob v1 API: SetDefaults_XGBoostJob and the validating webhook's checks and
messages (training-operator v1.9 ``xgboost_defaults.go`` and its test,
``pkg/webhooks/xgboost`` and its ``TestValidateXGBoostJob``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.engine.training.api import ReplicaSpec, RunPolicy
from mpi_controller.xgboost import (
    XGBoostJob,
    parse_xgboostjob,
    set_defaults,
    validate,
    validate_update,
)
from tests.unit.xgboost.jobs import EXAMPLES, IMAGE, example, replica, xgboostjob

DNS1035 = ("should match: a DNS-1035 label must consist of lower case alphanumeric characters "
           "or '-', start with an alphabetic character, and end with an alphanumeric character "
           "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
           "'[a-z]([-a-z0-9]*[a-z0-9])?')")
MASTER = "spec.xgbReplicaSpecs[Master]"
CONTAINERS = f"{MASTER}.template.spec.containers"


def messages(job: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(job)]


def worker_only(**worker: Any) -> dict[str, Any]:
    """Upstream's defaults test job: one Worker of one ``xgboost`` container, no port."""
    spec = {"template": {"spec": {"containers": [{"name": "xgboost", "image": IMAGE}]}}}
    return xgboostjob("", {"Worker": {**spec, **worker}})


def defaulted_worker(job: dict[str, Any]) -> tuple[Any, ...]:
    out = set_defaults(job)
    worker = out["spec"]["xgbReplicaSpecs"]["Worker"]
    return (out["spec"]["runPolicy"], worker["replicas"], worker["restartPolicy"],
            worker["template"]["spec"]["containers"][0]["ports"])


DEFAULT_PORT = [{"name": "xgboostjob-port", "containerPort": 9999}]


# -- defaults -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "run_policy", "expected"), [
    ({}, None, ({"cleanPodPolicy": "None"}, 1, "Never", DEFAULT_PORT)),
    ({"restartPolicy": "OnFailure"}, None,
     ({"cleanPodPolicy": "None"}, 1, "OnFailure", DEFAULT_PORT)),
    ({"replicas": 3}, None, ({"cleanPodPolicy": "None"}, 3, "Never", DEFAULT_PORT)),
    ({}, {"cleanPodPolicy": "All"}, ({"cleanPodPolicy": "All"}, 1, "Never", DEFAULT_PORT)),
], ids=["minimum setting", "restart policy", "replicas", "cleanpod policy"])
def test_set_defaults_table(spec: dict[str, Any], run_policy: dict[str, Any] | None,
                            expected: tuple[Any, ...]) -> None:
    """TestSetDefaults_XGBoostJob: cleanPodPolicy None, replicas 1, restartPolicy Never and the
    port xgboostjob-port 9999, each kept when set."""
    job = worker_only(**spec)
    if run_policy is not None:
        job["spec"]["runPolicy"] = run_policy
    assert defaulted_worker(job) == expected


@pytest.mark.parametrize("port", [9999, 9991])
def test_a_named_port_is_kept(port: int) -> None:
    """TestSetDefaults_XGBoostJob "Set spec with default node port name and port" / "node
    port": a port named xgboostjob-port is kept as it is, nothing appended."""
    job = worker_only()
    job["spec"]["xgbReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "xgboostjob-port", "containerPort": port}]
    assert defaulted_worker(job)[3] == [{"name": "xgboostjob-port", "containerPort": port}]


def test_a_port_of_another_name_gets_the_default_port_appended() -> None:
    """expectedXGBoostJob's "port set with custom name": the default port follows it."""
    job = worker_only()
    job["spec"]["xgbReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "metrics", "containerPort": 9090}]
    assert defaulted_worker(job)[3] == [{"name": "metrics", "containerPort": 9090},
                                        *DEFAULT_PORT]


def test_replica_keys_are_camel_cased_and_the_port_goes_to_the_xgboost_container() -> None:
    """setXGBoostJobTypeNamesToCamelCase (Master, Worker) and setXGBoostJobDefaultPort (the
    container named xgboost, else the first)."""
    job = xgboostjob("j", {"MASTER": replica(None), "worker": replica(None, restart="ExitCode")})
    job["spec"]["xgbReplicaSpecs"]["worker"]["template"]["spec"]["containers"].insert(
        0, {"name": "side", "image": "s"})
    job["spec"]["xgbReplicaSpecs"]["MASTER"]["template"]["spec"]["containers"][0]["name"] = "m"
    original = copy.deepcopy(job)
    specs = set_defaults(job)["spec"]["xgbReplicaSpecs"]
    assert job == original
    assert list(specs) == ["Master", "Worker"]
    assert (specs["Master"]["replicas"], specs["Master"]["restartPolicy"]) == (1, "Never")
    assert (specs["Worker"]["replicas"], specs["Worker"]["restartPolicy"]) == (1, "ExitCode")
    assert specs["Master"]["template"]["spec"]["containers"] == [
        {"name": "m", "image": IMAGE, "ports": DEFAULT_PORT}]
    side, xgb = specs["Worker"]["template"]["spec"]["containers"]
    assert side == {"name": "side", "image": "s"}
    assert xgb["ports"] == DEFAULT_PORT


def test_parse_reads_the_defaulted_example() -> None:
    """The typed view of upstream's examples/xgboost/xgboostjob.yaml, defaulted."""
    job = parse_xgboostjob(set_defaults(example()))
    template = example()["spec"]["xgbReplicaSpecs"]["Master"]["template"]
    assert job.name == "xgboost-dist-iris-test-train"
    assert job.run_policy == RunPolicy(clean_pod_policy="None")
    assert job.master == ReplicaSpec("Master", 1, "Never", template)
    assert job.worker is not None
    assert (job.worker.replicas, job.worker.restart_policy) == (2, "ExitCode")
    assert job.total_replicas == 3
    assert parse_xgboostjob({"spec": "x"}) == XGBoostJob()


@pytest.mark.parametrize("bad", [None, [], "x", {"xgbReplicaSpecs": {"Worker": None}},
                                 {"xgbReplicaSpecs": {"Master": {"template": []}}},
                                 {"xgbReplicaSpecs": []}, {"runPolicy": 3}])
def test_defaults_and_validation_never_raise(bad: Any) -> None:
    """Malformed jobs are left to validation, which reports them (upstream's typed API cannot
    hold them; its webhook would panic on a null replica spec)."""
    job = {"apiVersion": "kubeflow.org/v1", "kind": "XGBoostJob", "metadata": {"name": "j"},
           "spec": bad}
    out = set_defaults(job)
    assert validate(out)
    parse_xgboostjob(out)


# -- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_is_valid(name: str) -> None:
    """Upstream's examples pass its webhook as written, and after defaults."""
    assert messages(example(name)) == []
    assert messages(set_defaults(example(name))) == []


def test_valid_job_managed_by_the_training_operator() -> None:
    """TestValidateXGBoostJob "valid XGBoostJob"."""
    job = example()
    job["spec"]["runPolicy"] = {"managedBy": "kubeflow.org/training-operator"}
    assert messages(job) == []


def master(**replica_spec: Any) -> dict[str, Any]:
    return xgboostjob("test", {"Master": replica_spec})


@pytest.mark.parametrize(("job", "expected"), [
    ({**example(), "metadata": {"name": "-test"}}, [f'metadata.name: Invalid value: "-test": '
                                                    f"{DNS1035}"]),
    (master(replicas=1, template={"spec": {"containers": []}}),
     [f"{CONTAINERS}: Required value: must be specified",
      f"{CONTAINERS}: Required value: must have at least one container with name xgboost"]),
    (master(replicas=1, template={"spec": {"containers": [{"name": "xgboost", "image": ""}]}}),
     [f"{CONTAINERS}[0].image: Required value: must be required"]),
    (master(replicas=1, template={"spec": {"containers": [{"name": "", "image": IMAGE}]}}),
     [f"{CONTAINERS}: Required value: must have at least one container with name xgboost"]),
    (master(replicas=2, template={"spec": {"containers": [{"name": "xgboost", "image": IMAGE}]}}),
     [f"{MASTER}.replicas: Forbidden: must be 1"]),
    (xgboostjob("test", {"Worker": replica(1)}), [f"{MASTER}: Required value: must be present"]),
    ({**example(), "metadata": {"name": "test"},
      "spec": {**example()["spec"], "runPolicy": {"managedBy": "other-job-controller"}}},
     ['spec.runPolicy.managedBy: Unsupported value: "other-job-controller": supported values: '
      '"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"']),
], ids=["name does not meet DNS1035", "empty containers", "image is empty",
        "default container name doesn't present", "masterReplica other than 1",
        "masterReplica does not exist", "unsupported managedBy"])
def test_upstreams_webhook_cases(job: dict[str, Any], expected: list[str]) -> None:
    """TestValidateXGBoostJob, each case with the full message (upstream's test compares
    types and paths only)."""
    assert messages(job) == expected


def test_master_replicas_unset_is_refused_as_submitted_but_valid_defaulted() -> None:
    """validateXGBReplicaSpecs: ``rSpec.Replicas == nil`` is "must be 1"; the controller's
    defaulted copy has 1."""
    job = xgboostjob("j", {"Master": replica(None), "Worker": replica(2)})
    assert messages(job) == [f"{MASTER}.replicas: Forbidden: must be 1"]
    assert messages(set_defaults(job)) == []


def test_no_replica_specs_and_an_empty_map() -> None:
    """A nil map: "must be required", then "must be present"; an empty one: only the latter."""
    job = xgboostjob("j", {})
    assert messages(job) == [f"{MASTER}: Required value: must be present"]
    del job["spec"]["xgbReplicaSpecs"]
    assert messages(job) == ["spec.xgbReplicaSpecs: Required value: must be required",
                             f"{MASTER}: Required value: must be present"]


def test_every_replica_check_in_written_order() -> None:
    """Per type: an unsupported type (field.NotSupported), the containers, the images, the
    xgboost container, the Master's replicas; the missing-Master error last. Lower-case keys
    are refused as submitted (the webhook sees them before defaults camel-case them)."""
    job = xgboostjob("j", {"PS": replica(1), "worker": replica(2), "Master": replica(3)})
    job["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"] = [
        {"name": "main"}]
    assert messages(job) == [
        'spec.xgbReplicaSpecs[PS]: Unsupported value: "PS": supported values: "Master", '
        '"Worker"',
        'spec.xgbReplicaSpecs[worker]: Unsupported value: "worker": supported values: '
        '"Master", "Worker"',
        f"{CONTAINERS}[0].image: Required value: must be required",
        f"{CONTAINERS}: Required value: must have at least one container with name xgboost",
        f"{MASTER}.replicas: Forbidden: must be 1"]
    assert messages(set_defaults(xgboostjob("j", {"worker": replica(2),
                                                  "MASTER": replica(1)}))) == []


def test_workers_may_be_any_number() -> None:
    """Upstream checks only the Master's replicas: 0 or 5 workers are valid."""
    for workers in (0, 5):
        assert messages(xgboostjob("j", {"Master": replica(1), "Worker": replica(workers)})) == []


def test_update_keeps_managed_by() -> None:
    """ValidateXGBoostJob on update: ValidateRunPolicyUpdate(old, new) (managedBy immutable)
    before the checks of a new job."""
    old = example()
    new = copy.deepcopy(old)
    assert validate_update(old, new) == []
    new["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    new["metadata"]["name"] = "Bad"
    assert [str(e) for e in validate_update(old, new)] == [
        f'metadata.name: Invalid value: "Bad": {DNS1035}',
        'spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is '
        "immutable"]
    new["spec"]["runPolicy"] = {"managedBy": "someone"}
    new["metadata"]["name"] = "ok"
    assert [str(e) for e in validate_update(old, new)] == [
        'spec.runPolicy.managedBy: Invalid value: "someone": field is immutable',
        'spec.runPolicy.managedBy: Unsupported value: "someone": supported values: '
        '"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"']
