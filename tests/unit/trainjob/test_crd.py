"""The three CRDs of ``trainer.kubeflow.org/v1alpha1`` against Trainer v2.3.0's own files
(``manifests/base/crds/trainer.kubeflow.org_{trainjobs,trainingruntimes,
clustertrainingruntimes}.yaml``, fetched with ``go mod download``), up to descriptions.

The Kubernetes types the schemas embed (a Job's spec, EnvVar, Volume, ...) are given to our
builders as upstream's own copies of them, taken from the files at the places they sit: what
is compared is every Trainer and JobSet field (names, types, formats, defaults, enums, limits,
list types, CEL rules and messages, required fields) and where each Kubernetes type goes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.kube.crd import CRD
from mpi_controller.trainjob.crd import (
    CLUSTER_TRAINING_RUNTIME,
    COMPONENTS,
    TRAINING_RUNTIME,
    TRAINJOB,
)
from tests.unit.trainjob.upstream import crd as upstream_crd

POD_TEMPLATE = {"type": "object", "description": "unused: the pod template is in JobSpec"}


def without_descriptions(node: Any) -> Any:
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {k: without_descriptions(v) for k, v in node.items() if k != "description"}


def _at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """The node at ``path`` (property names; ``[]`` is ``items``)."""
    node = schema
    for step in path.split("."):
        node = node["items"] if step == "[]" else node["properties"][step]
    return node


def _root(document: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def upstream_components() -> tuple[dict[str, Any], ...]:
    """Upstream's copies of :data:`COMPONENTS`, in order, without the keys Trainer adds to
    them where it embeds them (a description, a CEL rule)."""
    trainjob, runtime = _root(upstream_crd("trainjobs")), _root(upstream_crd("trainingruntimes"))
    pod = ("spec.runtimePatches.[].trainingRuntimeSpec.template.spec.replicatedJobs.[]."
           "template.spec.template.spec")
    found = {
        "JobSpec": _at(runtime, "spec.template.spec.replicatedJobs.[].template.spec"),
        "PersistentVolumeClaim": _at(runtime, "spec.template.spec.volumeClaimPolicies.[]."
                                              "templates.[]"),
        "EnvVar": _at(trainjob, "spec.trainer.env.[]"),
        "LocalObjectReference": _at(trainjob, "spec.initializer.dataset.secretRef"),
        "ResourceRequirements": _at(trainjob, "spec.trainer.resourcesPerNode"),
        "Volume": _at(trainjob, pod + ".volumes.[]"),
        "VolumeMount": _at(trainjob, pod + ".containers.[].volumeMounts.[]"),
        "SecurityContext": _at(trainjob, pod + ".containers.[].securityContext"),
        "PodSecurityContext": _at(trainjob, pod + ".securityContext"),
        "Affinity": _at(trainjob, pod + ".affinity"),
        "Toleration": _at(trainjob, pod + ".tolerations.[]"),
        "PodSchedulingGate": _at(trainjob, pod + ".schedulingGates.[]"),
    }
    out = []
    for name in COMPONENTS:
        schema = copy.deepcopy(found[name.rsplit(".", 1)[1]])
        schema.pop("x-kubernetes-validations", None)
        out.append(schema)
    return tuple(out)


def ours(crd: CRD) -> dict[str, Any]:
    components = dict(zip(COMPONENTS, upstream_components(), strict=True))
    return crd.document(POD_TEMPLATE, components)


@pytest.mark.parametrize("crd", [TRAINJOB, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME],
                         ids=lambda c: c.plural)
def test_the_crd_is_upstreams_up_to_descriptions(crd: CRD) -> None:
    assert without_descriptions(ours(crd)) == without_descriptions(upstream_crd(crd.plural))


def test_names_scope_and_subresources() -> None:
    """TrainJob: namespaced, status subresource, State and Age columns; the runtimes: no
    subresource and no columns, ClusterTrainingRuntime cluster-scoped."""
    trainjob, runtime, cluster = (ours(c)["spec"] for c in
                                  (TRAINJOB, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME))
    assert (trainjob["scope"], runtime["scope"], cluster["scope"]) == \
        ("Namespaced", "Namespaced", "Cluster")
    assert trainjob["versions"][0]["subresources"] == {"status": {}}
    assert [c["name"] for c in trainjob["versions"][0]["additionalPrinterColumns"]] == \
        ["State", "Age"]
    assert "subresources" not in cluster["versions"][0]
    assert "additionalPrinterColumns" not in runtime["versions"][0]
    assert [c.name for c in (TRAINJOB, TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME)] == [
        "trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
        "clustertrainingruntimes.trainer.kubeflow.org"]


def test_the_embedded_kubernetes_types_are_the_ones_given() -> None:
    """The generator's converted components go where upstream has them (a marker each)."""
    markers = {name: {"type": "object", "x-marker": name} for name in COMPONENTS}
    schema = _root(TRAINJOB.document(POD_TEMPLATE, markers))
    assert _at(schema, "spec.trainer.env.[]")["x-marker"] == "io.k8s.api.core.v1.EnvVar"
    runtime = _root(TRAINING_RUNTIME.document(POD_TEMPLATE, markers))
    job = _at(runtime, "spec.template.spec.replicatedJobs.[].template.spec")
    assert job["x-marker"] == "io.k8s.api.batch.v1.JobSpec"
