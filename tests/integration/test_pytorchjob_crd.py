"""The PyTorchJob CRD (deploy/crd/kubeflow.org_pytorchjobs.yaml) on a real API server: the
issue's example is accepted as written, the replica specs are required, elasticPolicy.metrics
are autoscaling/v2 MetricSpecs, and it has the status and **scale** subresources (the Worker
replicas, ``kubectl scale`` works) and the State and Age printer columns (as training-operator
v1.9.2's CRD)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.pytorchjobs import CPU_METRIC, PyTorchJobs, pytorchjob, replica, simple
from tests.support import Cluster
from tests.tfjobs import dry_run_create, rejection

pytestmark = pytest.mark.cluster


def _create(kube_api: Any, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    return dry_run_create(kube_api, namespace, "pytorchjobs", body)


def _rejection(kube_api: Any, namespace: str, body: dict[str, Any]) -> str:
    return rejection(kube_api, namespace, "pytorchjobs", body)


def test_accepts_the_example_and_checks_the_schema(kube_api: Any, namespace: str,
                                                   pytorchjob_crd: str) -> None:
    doc = simple()
    doc["metadata"]["namespace"] = namespace
    assert _create(kube_api, namespace, doc)["spec"] == doc["spec"]
    empty = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "e"},
             "spec": {}}
    assert "spec.pytorchReplicaSpecs: Required value" in _rejection(kube_api, namespace, empty)
    bad = pytorchjob("b", {"Worker": replica(1)}, elastic={"metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"averageValue": "lots"}}}]})
    message = _rejection(kube_api, namespace, bad)
    assert "spec.elasticPolicy.metrics[0].resource.target.type: Required value" in message
    assert "spec.elasticPolicy.metrics[0].resource.target.averageValue" in message
    good = pytorchjob("g", {"Worker": replica(1)}, elastic={"metrics": [CPU_METRIC]},
                      nprocPerNode="4")
    assert _create(kube_api, namespace, good)["spec"]["elasticPolicy"]["metrics"] == [
        CPU_METRIC]


def test_subresources_and_columns(cluster: Cluster, kube_api: Any, namespace: str,
                                  pytorchjob_crd: str) -> None:
    """kubectl scale writes spec.pytorchReplicaSpecs.Worker.replicas; the scale subresource
    reads the Worker's active count and selector from the status (none yet: no controller)."""
    crd = client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(pytorchjob_crd)
    version, = crd.spec.versions
    assert version.name == "v1"
    assert version.subresources.status is not None
    scale = version.subresources.scale
    assert (scale.spec_replicas_path, scale.status_replicas_path, scale.label_selector_path) == (
        ".spec.pytorchReplicaSpecs.Worker.replicas", ".status.replicaStatuses.Worker.active",
        ".status.replicaStatuses.Worker.selector")
    assert [(c.name, c.json_path) for c in version.additional_printer_columns] == [
        ("State", ".status.conditions[-1:].type"), ("Age", ".metadata.creationTimestamp")]
    jobs = PyTorchJobs(kube_api, namespace)
    jobs.create(pytorchjob("s", {"Master": replica(1), "Worker": replica(2)}))
    cluster.kubectl("-n", namespace, "scale", "pytorchjob/s", "--replicas=5")
    assert jobs.get("s")["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 5
    assert jobs.get("s")["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    got = jobs.scale("s")
    assert (got["spec"]["replicas"], got["status"]["replicas"]) == (5, 0)
