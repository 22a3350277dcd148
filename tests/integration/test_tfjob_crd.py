"""The TFJob CRD (deploy/crd/kubeflow.org_tfjobs.yaml) on a real API server: every TFJob
example is accepted as written (``runPolicy.suspend`` defaults to false where a runPolicy is
given, as in upstream's CRD, whose runPolicy has no default itself), the replica
specs are required, the queue is immutable, and it has the status subresource and the State
and Age printer columns (as training-operator v1.9.2's CRD)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.support import REPO
from tests.tfjobs import TFJobs, dry_run_create, rejection, replica, tfjob

pytestmark = pytest.mark.cluster

EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.yaml")
                  if yaml.safe_load(p.read_text()).get("kind") == "TFJob")


def _create(kube_api: Any, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    return dry_run_create(kube_api, namespace, "tfjobs", body)


def _rejection(kube_api: Any, namespace: str, body: dict[str, Any]) -> str:
    return rejection(kube_api, namespace, "tfjobs", body)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_accepts_every_tfjob_example(kube_api: Any, namespace: str, tfjob_crd: str,
                                     example: Path) -> None:
    doc = yaml.safe_load(example.read_text())
    doc["metadata"]["namespace"] = namespace
    created = _create(kube_api, namespace, doc)
    assert created["spec"] == doc["spec"]
    doc["spec"]["runPolicy"] = {}
    assert _create(kube_api, namespace, doc)["spec"]["runPolicy"] == {"suspend": False}


def test_schema_subresource_and_columns(kube_api: Any, namespace: str, tfjob_crd: str) -> None:
    empty = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "e"},
             "spec": {}}
    assert "spec.tfReplicaSpecs: Required value" in _rejection(kube_api, namespace, empty)
    bad = tfjob("b", {"Worker": replica(1)})
    bad["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "two"
    assert "spec.tfReplicaSpecs.Worker.replicas in body must be of type integer" in _rejection(
        kube_api, namespace, bad)
    jobs = TFJobs(kube_api, namespace)
    jobs.create(tfjob("q", {"Worker": replica(1)},
                      run_policy={"schedulingPolicy": {"queue": "a"}}))
    with pytest.raises(client.ApiException) as exc:
        jobs.patch("q", {"spec": {"runPolicy": {"schedulingPolicy": {"queue": "b"}}}})
    assert "spec.runPolicy.schedulingPolicy.queue is immutable" in exc.value.body
    crd = client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(tfjob_crd)
    version, = crd.spec.versions
    assert version.name == "v1"
    assert version.subresources.status is not None
    assert [(c.name, c.json_path) for c in version.additional_printer_columns] == [
        ("State", ".status.conditions[-1:].type"), ("Age", ".metadata.creationTimestamp")]
