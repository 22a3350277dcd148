"""The older MPIJob APIs: ``kubeflow.org/v1`` (training-operator v1.9: ``SetDefaults_MPIJob``,
the cleanPodPolicy sync of ``Reconcile``, ``ValidateV1MpiJobSpec``'s messages) and
``kubeflow.org/v1alpha2`` (mpi-operator v0.2.3: its defaults, its CRD schema's checks in the
API server's words, and what its controller dereferences)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from mpi_controller.mpi import v1, v1alpha2

REPO = Path(__file__).resolve().parents[3]
C = {"containers": [{"name": "mpi", "image": "img"}]}


def v1_job(**specs: Any) -> dict[str, Any]:
    return {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": {"name": "j"},
            "spec": {"mpiReplicaSpecs": specs}}


def replica(**fields: Any) -> dict[str, Any]:
    return {"template": {"spec": copy.deepcopy(C)}, **fields}


# -- v1 defaults --------------------------------------------------------------------------------

def test_v1_defaults() -> None:
    job = v1_job(Launcher=replica(), Worker=replica(restartPolicy="OnFailure"))
    out = v1.set_defaults(job)
    spec = out["spec"]
    assert spec["cleanPodPolicy"] == "None"
    assert spec["runPolicy"] == {"cleanPodPolicy": "None"}
    assert spec["mpiReplicaSpecs"]["Launcher"] == replica(replicas=1, restartPolicy="Never")
    assert spec["mpiReplicaSpecs"]["Worker"] == replica(replicas=0, restartPolicy="OnFailure")
    assert "cleanPodPolicy" not in job["spec"]  # a copy


@pytest.mark.parametrize(("top", "run_policy", "defaulted", "synced"), [
    (None, None, ("None", "None"), "None"),
    ("Running", None, ("Running", None), "Running"),
    (None, "All", (None, "All"), "All"),
    ("Running", "All", ("Running", "All"), "All"),
])
def test_v1_clean_pod_policy_default_then_sync(top: str | None, run_policy: str | None,
                                               defaulted: tuple[str | None, str | None],
                                               synced: str) -> None:
    """SetDefaults fills both only when neither is set; Reconcile then lets runPolicy win."""
    job = v1_job(Launcher=replica())
    if top is not None:
        job["spec"]["cleanPodPolicy"] = top
    if run_policy is not None:
        job["spec"]["runPolicy"] = {"cleanPodPolicy": run_policy}
    out = v1.set_defaults(job)
    top_out = out["spec"].get("cleanPodPolicy")
    rp_out = out["spec"]["runPolicy"].get("cleanPodPolicy")
    assert (top_out, rp_out) == defaulted
    final = v1.sync_clean_pod_policy(out)
    assert final["spec"]["cleanPodPolicy"] == final["spec"]["runPolicy"]["cleanPodPolicy"] == synced


def test_v1_defaults_never_raise_on_malformed_input() -> None:
    for bad in (None, "x", {"spec": "x"}, {"spec": {"runPolicy": 3, "mpiReplicaSpecs": []}}):
        v1.set_defaults(bad)  # type: ignore[arg-type]
        v1.sync_clean_pod_policy(bad)  # type: ignore[arg-type]


# -- v1 validation (ValidateV1MpiJobSpec) -------------------------------------------------------

V1_CASES = [
    ({"Launcher": replica(), "Worker": replica(replicas=2)}, None, None),
    ({"Launcher": replica(replicas=1)}, None, None),
    (None, "spec.mpiReplicaSpecs", "MPIReplicaSpecs is not valid"),
    ({"Launcher": None}, "spec.mpiReplicaSpecs[Launcher].template.spec.containers",
     "MPIReplicaSpecs is not valid: containers definition expected in Launcher"),
    ({"Launcher": replica(), "Worker": {"replicas": 1}},
     "spec.mpiReplicaSpecs[Worker].template.spec.containers",
     "MPIReplicaSpecs is not valid: containers definition expected in Worker"),
    ({"Launcher": replica(), "Chief": replica()}, "spec.mpiReplicaSpecs[Chief]",
     "MPIReplicaType is Chief but must be one of [Launcher Worker]"),
    ({"Launcher": {"template": {"spec": {"containers": [{"name": "a"}]}}}},
     "spec.mpiReplicaSpecs[Launcher].template.spec.containers[0].image",
     "MPIReplicaSpec is not valid: Image is undefined in the container of Launcher"),
    ({"Launcher": replica(), "Worker": {"template": {"spec": {"containers": [
        {"name": "a", "image": "i"}, {"image": "i"}]}}}},
     "spec.mpiReplicaSpecs[Worker].template.spec.containers[1].name",
     "MPIReplicaSpec is not valid: ImageName is undefined in the container of Worker"),
    ({"Launcher": replica(replicas=2)}, "spec.mpiReplicaSpecs[Launcher].replicas",
     "MPIReplicaSpec is not valid: There must be only 1 launcher replica"),
    ({"Worker": replica()}, "spec.mpiReplicaSpecs[Launcher]",
     "MPIReplicaSpec is not valid: Master ReplicaSpec must be present"),
]


@pytest.mark.parametrize(("specs", "field", "message"), V1_CASES)
def test_v1_validation_messages(specs: dict[str, Any] | None, field: str | None,
                                message: str | None) -> None:
    job = v1_job()
    job["spec"]["mpiReplicaSpecs"] = specs
    if specs is None:
        del job["spec"]["mpiReplicaSpecs"]
    errors = v1.validate(job)
    if message is None:
        assert errors == []
        return
    assert [(e.field, str(e)) for e in errors] == [(field, message)]
    assert errors[0].with_field() == f"{field}: {message}"


def test_v1_validation_reports_the_first_problem_in_object_order() -> None:
    job = v1_job(Worker={"replicas": 1}, Launcher=replica(replicas=3))
    assert [str(e) for e in v1.validate(job)] == [
        "MPIReplicaSpecs is not valid: containers definition expected in Worker"]


def test_the_v1_example_is_valid_and_parses() -> None:
    job = yaml.safe_load((REPO / "examples/v1/tensorflow-mnist-elastic.yaml").read_text())
    assert v1.validate(job) == []
    view = v1.parse_mpi_job(v1.set_defaults(job))
    assert view.spec.clean_pod_policy == "Running"
    assert view.spec.slots == 1
    worker = view.spec.replica("Worker")
    assert worker is not None
    assert (worker.replicas, worker.restart_policy) == (2, "Never")


# -- v1alpha2 -----------------------------------------------------------------------------------

def a2_job(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "kubeflow.org/v1alpha2", "kind": "MPIJob", "metadata": {"name": "j"},
            "spec": spec}


@pytest.mark.parametrize(("launcher_policy", "defaulted"), [
    (None, "OnFailure"), ("Always", "OnFailure"), ("ExitCode", "OnFailure"), ("Never", "Never"),
    ("OnFailure", "OnFailure")])
def test_v1alpha2_defaults(launcher_policy: str | None, defaulted: str) -> None:
    launcher = replica() if launcher_policy is None else replica(restartPolicy=launcher_policy)
    out = v1alpha2.set_defaults(a2_job({"mpiReplicaSpecs": {"Launcher": launcher,
                                                            "Worker": replica(replicas=1)}}))
    assert out["spec"]["backoffLimit"] == 6
    assert out["spec"]["cleanPodPolicy"] == "None"
    assert out["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] == defaulted
    assert out["spec"]["mpiReplicaSpecs"]["Worker"] == replica(replicas=1)


def test_v1alpha2_effective_values() -> None:
    view = v1alpha2.parse_mpi_job(a2_job({
        "backoffLimit": 3, "activeDeadlineSeconds": 100, "cleanPodPolicy": "Running",
        "runPolicy": {"backoffLimit": 1, "cleanPodPolicy": "All"}}))
    assert view.spec.effective_backoff_limit == 1
    assert view.spec.effective_active_deadline_seconds == 100
    assert view.spec.clean_pod_policy == "Running"
    assert view.spec.slots == 1


GOOD_A2 = {"mpiReplicaSpecs": {"Launcher": replica(replicas=1), "Worker": replica(replicas=2)}}


@pytest.mark.parametrize(("change", "messages"), [
    ({}, []),
    ({"slotsPerWorker": 0}, ["spec.slotsPerWorker: Invalid value: 0: spec.slotsPerWorker in "
                             "body should be greater than or equal to 1"]),
    ({"mpiReplicaSpecs": {"Launcher": replica(replicas=2), "Worker": replica(replicas=0)}}, [
        "spec.mpiReplicaSpecs.Launcher.replicas: Invalid value: 2: "
        "spec.mpiReplicaSpecs.Launcher.replicas in body should be less than or equal to 1",
        "spec.mpiReplicaSpecs.Worker.replicas: Invalid value: 0: "
        "spec.mpiReplicaSpecs.Worker.replicas in body should be greater than or equal to 1"]),
    ({"mpiReplicaSpecs": None}, ["spec.mpiReplicaSpecs: Required value: must have replica specs"]),
    ({"mpiReplicaSpecs": {"Launcher": {"template": {}}}}, [
        "spec.mpiReplicaSpecs[Launcher].template.spec.containers: Required value: must define "
        "at least one container",
        "spec.mpiReplicaSpecs[Worker]: Required value: must have Worker replica spec"]),
    ({"mpiReplicaSpecs": {"Launcher": replica(), "Worker": replica()}}, [
        "spec.mpiReplicaSpecs[Worker].replicas: Required value: must define number of replicas"]),
])
def test_v1alpha2_validation(change: dict[str, Any], messages: list[str]) -> None:
    spec = {**copy.deepcopy(GOOD_A2), **change}
    if spec.get("mpiReplicaSpecs") is None:
        spec.pop("mpiReplicaSpecs", None)
    assert [str(e) for e in v1alpha2.validate(a2_job(spec))] == messages


def test_the_v1alpha2_example_is_valid() -> None:
    job = yaml.safe_load((REPO / "examples/v1alpha2/tensorflow-benchmarks.yaml").read_text())
    assert v1alpha2.validate(job) == []
    view = v1alpha2.parse_mpi_job(v1alpha2.set_defaults(job))
    assert view.spec.effective_backoff_limit == 6
    assert view.spec.clean_pod_policy == "Running"
    assert view.name == "tensorflow-benchmarks"


@pytest.mark.parametrize("bad", [None, 3, "x", {"spec": []}, {"spec": {"mpiReplicaSpecs": 3,
                                                                       "slotsPerWorker": "2"}}])
def test_spoke_apis_never_raise(bad: Any) -> None:
    for api in (v1, v1alpha2):
        api.validate(bad)
        api.set_defaults(bad)
        api.parse_mpi_job(bad)
