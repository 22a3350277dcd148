"""set_defaults mirrors mpi-operator v0.8.2 SetDefaults_MPIJob
(``pkg/apis/kubeflow/v2beta1/default.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.mpi.v2beta1.defaults import set_defaults


def _job(spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "pi"}, "spec": spec}


def test_empty_spec_gets_every_default_but_no_replica_specs() -> None:
    """cleanPodPolicy None, slotsPerWorker 1, sshAuthMountPath /root/.ssh, OpenMPI,
    AtStartup; runLauncherAsWorker and suspend stay unset."""
    assert set_defaults(_job({}))["spec"] == {
        "runPolicy": {"cleanPodPolicy": "None"},
        "slotsPerWorker": 1,
        "sshAuthMountPath": "/root/.ssh",
        "mpiImplementation": "OpenMPI",
        "launcherCreationPolicy": "AtStartup",
    }


def test_replica_defaults() -> None:
    """Launcher: OnFailure, replicas 1. Worker: Never, replicas 0. Only when present."""
    out = set_defaults(_job({"mpiReplicaSpecs": {"Launcher": {}, "Worker": {}}}))
    assert out["spec"]["mpiReplicaSpecs"] == {
        "Launcher": {"restartPolicy": "OnFailure", "replicas": 1},
        "Worker": {"restartPolicy": "Never", "replicas": 0},
    }
    only = set_defaults(_job({"mpiReplicaSpecs": {"Launcher": None}}))
    assert only["spec"]["mpiReplicaSpecs"] == {"Launcher": None}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("slotsPerWorker", 0),
        ("sshAuthMountPath", "/home/u/.ssh"),
        ("mpiImplementation", "Intel"),
        ("launcherCreationPolicy", "WaitForWorkersReady"),
    ],
)
def test_set_values_are_kept(field: str, value: Any) -> None:
    assert set_defaults(_job({field: value}))["spec"][field] == value


@pytest.mark.parametrize("value", [None, ""])
def test_empty_strings_and_nulls_are_unset(value: Any) -> None:
    out = set_defaults(_job({"sshAuthMountPath": value, "mpiImplementation": value}))
    assert out["spec"]["sshAuthMountPath"] == "/root/.ssh"
    assert out["spec"]["mpiImplementation"] == "OpenMPI"


def test_existing_clean_pod_policy_and_replicas_kept() -> None:
    spec = {
        "runPolicy": {"cleanPodPolicy": "All"},
        "mpiReplicaSpecs": {"Worker": {"replicas": 3, "restartPolicy": "OnFailure"}},
    }
    out = set_defaults(_job(spec))["spec"]
    assert out["runPolicy"] == {"cleanPodPolicy": "All"}
    assert out["mpiReplicaSpecs"]["Worker"] == {"replicas": 3, "restartPolicy": "OnFailure"}


def test_input_is_not_mutated_and_malformed_parts_are_left() -> None:
    job = _job({"runPolicy": "bad", "mpiReplicaSpecs": ["x"]})
    before = copy.deepcopy(job)
    out = set_defaults(job)
    assert job == before
    assert out["spec"]["runPolicy"] == "bad"
    assert out["spec"]["mpiReplicaSpecs"] == ["x"]
    assert set_defaults(_job("nope"))["spec"] == "nope"
    assert set_defaults({})["spec"]["slotsPerWorker"] == 1
