"""validate mirrors mpi-operator v0.8.2 ValidateMPIJob
(``pkg/apis/kubeflow/validation/validation.go``): order, paths, messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.kube.fielderrors import aggregate_message
from mpi_controller.mpi.v2beta1.defaults import set_defaults
from mpi_controller.mpi.v2beta1.validation import validate

DNS = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
BASE: dict[str, Any] = {
    "metadata": {"name": "foo"},
    "spec": {
        "mpiReplicaSpecs": {
            "Launcher": {"template": {"spec": {"containers": [{"image": "bar"}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"image": "bar"}]}}},
        }
    },
}


def _job(**changes: Any) -> dict[str, Any]:
    """A defaulted valid job, then ``path=value`` changes (path with __ for nesting)."""
    job = set_defaults(BASE)
    for path, value in changes.items():
        node = job
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return job


_DELETE = object()


def _messages(job: Any) -> list[str]:
    return [str(e) for e in validate(job)]


def test_valid_job_has_no_errors() -> None:
    assert validate(_job()) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param(
            {"metadata__name": "1-foo"},
            [
                f'metadata.name: Invalid value: "1-foo": will not able to create pod and service '
                f'with invalid DNS label "1-foo-worker-1": {DNS}'
            ],
            id="name-dns1035",
        ),
        pytest.param(
            {"metadata__name": "a" * 60},
            [
                f'metadata.name: Invalid value: "{"a" * 60}": will not able to create pod and service '  # noqa: E501
                f'with invalid DNS label "{"a" * 60}-worker-1": must be no more than 63 characters'
            ],
            id="name-too-long",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs": _DELETE},
            ["spec.mpiReplicaSpecs: Required value: must have replica specs"],
            id="no-specs",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs__Launcher": _DELETE},
            ["spec.mpiReplicaSpecs[Launcher]: Required value: must have Launcher replica spec"],
            id="no-launcher",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs__Launcher__replicas": 2},
            ["spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1"],
            id="launcher-replicas",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs__Worker__replicas": 0},
            [
                "spec.mpiReplicaSpecs[Worker].replicas: Invalid value: 0: "
                "must be greater than or equal to 1"
            ],
            id="worker-replicas-zero",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs__Worker__replicas": None},
            [
                "spec.mpiReplicaSpecs[Worker].replicas: Required value: must define number of replicas"  # noqa: E501
            ],
            id="worker-replicas-missing",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs__Worker__restartPolicy": "Always"},
            [
                'spec.mpiReplicaSpecs[Worker].restartPolicy: Unsupported value: "Always": '
                'supported values: "Never", "OnFailure"'
            ],
            id="restart-policy",
        ),
        pytest.param(
            {"spec__mpiReplicaSpecs__Launcher__template__spec__containers": []},
            [
                "spec.mpiReplicaSpecs[Launcher].template.spec.containers: Required value: "
                "must define at least one container"
            ],
            id="no-containers",
        ),
        pytest.param(
            {"spec__slotsPerWorker": None},
            ["spec.slotsPerWorker: Required value: must have number of slots per worker"],
            id="slots-missing",
        ),
        pytest.param(
            {"spec__slotsPerWorker": -1},
            ["spec.slotsPerWorker: Invalid value: -1: must be greater than or equal to 0"],
            id="slots-negative",
        ),
        pytest.param(
            {"spec__runPolicy__cleanPodPolicy": None},
            ["spec.runPolicy.cleanPodPolicy: Required value: must have clean Pod policy"],
            id="clean-missing",
        ),
        pytest.param(
            {"spec__runPolicy__cleanPodPolicy": "Some"},
            [
                'spec.runPolicy.cleanPodPolicy: Unsupported value: "Some": '
                'supported values: "All", "None", "Running"'
            ],
            id="clean-bad",
        ),
        pytest.param(
            {
                "spec__runPolicy__ttlSecondsAfterFinished": -1,
                "spec__runPolicy__activeDeadlineSeconds": -2,
                "spec__runPolicy__backoffLimit": -3,
            },
            [
                "spec.runPolicy.ttlSecondsAfterFinished: Invalid value: -1: must be greater than or equal to 0",  # noqa: E501
                "spec.runPolicy.activeDeadlineSeconds: Invalid value: -2: must be greater than or equal to 0",  # noqa: E501
                "spec.runPolicy.backoffLimit: Invalid value: -3: must be greater than or equal to 0",  # noqa: E501
            ],
            id="run-policy-negative",
        ),
        pytest.param(
            {"spec__runPolicy__managedBy": "other"},
            [
                'spec.runPolicy.managedBy: Unsupported value: "other": supported values: '
                '"kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"'
            ],
            id="managed-by",
        ),
        pytest.param(
            {"spec__sshAuthMountPath": ""},
            ["spec.sshAuthMountPath: Required value: must have a mount path for SSH credentials"],
            id="ssh-path",
        ),
        pytest.param(
            {"spec__mpiImplementation": "Unknown"},
            [
                'spec.mpiImplementation: Unsupported value: "Unknown": '
                'supported values: "Intel", "MPICH", "OpenMPI"'
            ],
            id="implementation",
        ),
    ],
)
def test_each_rule(changes: dict[str, Any], expected: list[str]) -> None:
    """Every rule of ValidateMPIJob, with apimachinery's field.Error text."""
    assert _messages(_job(**changes)) == expected


def test_missing_worker_spec_is_allowed_and_name_uses_one_replica() -> None:
    """No Worker spec: no error, and the name check uses R = 1 (`<name>-worker-0`)."""
    job = _job(spec__mpiReplicaSpecs__Worker=_DELETE, metadata__name="")
    assert _messages(job) == [
        f'metadata.name: Invalid value: "": will not able to create pod and service with invalid '
        f'DNS label "-worker-0": {DNS}'
    ]


def test_order_and_aggregate() -> None:
    """Errors come in upstream's order; the aggregate is `[a, b, ...]` without duplicates."""
    job = copy.deepcopy(BASE)
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 3
    errors = validate(job)
    assert [e.field for e in errors] == [
        "spec.mpiReplicaSpecs[Launcher].restartPolicy",
        "spec.mpiReplicaSpecs[Launcher].replicas",
        "spec.mpiReplicaSpecs[Worker].restartPolicy",
        "spec.slotsPerWorker",
        "spec.runPolicy.cleanPodPolicy",
        "spec.sshAuthMountPath",
        "spec.mpiImplementation",
    ]
    assert aggregate_message(errors[:1]) == str(errors[0])
    assert aggregate_message([errors[0], errors[0], errors[1]]) == (f"[{errors[0]}, {errors[1]}]")
    assert aggregate_message([errors[0], errors[0]]) == str(errors[0])


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"spec__slotsPerWorker": "2"},
            ['spec.slotsPerWorker: Invalid value: "2": must be of type integer'],
        ),
        (
            {"spec__mpiReplicaSpecs__Worker": "x"},
            ['spec.mpiReplicaSpecs[Worker]: Invalid value: "x": must be of type object'],
        ),
        (
            {"spec__mpiReplicaSpecs__Worker__template__spec__containers": ["c"]},
            [
                'spec.mpiReplicaSpecs[Worker].template.spec.containers[0]: Invalid value: "c": '
                "must be of type object"
            ],
        ),
        (
            {"spec__runPolicy__suspend": "yes"},
            ['spec.runPolicy.suspend: Invalid value: "yes": must be of type boolean'],
        ),
    ],
)
def test_wrong_json_types_are_reported(changes: dict[str, Any], expected: list[str]) -> None:
    """Beyond upstream (its decoder rejects these): wrong JSON types are field errors."""
    assert _messages(_job(**changes)) == expected


def test_non_object_inputs() -> None:
    assert _messages("x") == ['<root>: Invalid value: "x": must be of type object']
    assert _messages({"metadata": {"name": "a"}, "spec": 3})[-1] == (
        "spec: Invalid value: 3: must be of type object"
    )
