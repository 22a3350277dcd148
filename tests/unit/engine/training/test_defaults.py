"""The defaults every ``kubeflow.org/v1`` kind shares (``engine/training/defaults.py``), with a
kind's names: on a deep copy, cleanPodPolicy, camel-cased replica types, each replica's
replicas, restart policy and port; and PyTorchJob's and PaddleJob's elastic replica rule."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.engine.training.defaults import default_elastic_replicas, default_job
from tests.unit.engine.training import somejob


def test_the_common_defaults_on_a_copy() -> None:
    job: dict[str, Any] = {"metadata": {"name": "j"}, "spec": {"someReplicaSpecs": {
        "WORKER": {"template": {"spec": {"containers": [{"name": "side"}, {"name": "some"}]}}},
        "master": {"replicas": 0, "restartPolicy": "OnFailure",
                   "template": {"spec": {"containers": [
                       {"name": "x", "ports": [{"name": "somejob-port", "containerPort": 1}]}]}}},
    }}}
    out, specs = default_job(job, somejob)
    assert out == {"metadata": {"name": "j"}, "spec": {"someReplicaSpecs": {
        "Worker": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [
            {"name": "side"},
            {"name": "some", "ports": [{"name": "somejob-port", "containerPort": 1234}]}]}}},
        "Master": {"replicas": 0, "restartPolicy": "OnFailure", "template": {"spec": {
            "containers": [{"name": "x", "ports": [{"name": "somejob-port",
                                                    "containerPort": 1}]}]}}},
    }, "runPolicy": {"cleanPodPolicy": "None"}}}
    assert specs is out["spec"]["someReplicaSpecs"]
    assert "WORKER" in job["spec"]["someReplicaSpecs"]


def test_malformed_parts_are_left_as_they_are() -> None:
    assert default_job({}, somejob) == ({"spec": {"runPolicy": {"cleanPodPolicy": "None"}}}, {})
    job: dict[str, Any] = {"spec": {"someReplicaSpecs": {"Worker": "x"}, "runPolicy": []}}
    assert default_job(job, somejob)[0] == job


@pytest.mark.parametrize(("policy", "worker", "defaulted"), [
    ({}, {"replicas": 3}, {"minReplicas": 3, "maxReplicas": 3}),
    ({"minReplicas": 2}, {"replicas": 3}, {"minReplicas": 2, "maxReplicas": 2}),
    ({"maxReplicas": 4}, {"replicas": 3}, {"minReplicas": 4, "maxReplicas": 4}),
    ({"minReplicas": 1, "maxReplicas": 4}, None, {"minReplicas": 1, "maxReplicas": 4}),
    ({}, None, {}),
])
def test_elastic_replicas(policy: dict[str, Any], worker: object,
                          defaulted: dict[str, Any]) -> None:
    default_elastic_replicas(policy, worker)
    assert policy == defaulted
