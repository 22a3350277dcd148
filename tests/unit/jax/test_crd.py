"""The JAXJob CRD document: training-operator v1.9.2's
``manifests/base/crds/kubeflow.org_jaxjobs.yaml`` up to descriptions, the pod template (the
API server's own PodTemplateSpec schema goes there; ``hack/gen-crd.py``) and controller-gen's
version annotation. ``upstream_jaxjob_crd.json`` is that file with those three taken out
(descriptions removed, the template replaced by ``"<PodTemplateSpec>"``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mpi_controller.jax.crd import JAXJOB
from mpi_controller.jax.plugin import PLUGIN

UPSTREAM = Path(__file__).with_name("upstream_jaxjob_crd.json")
TEMPLATE = "<PodTemplateSpec>"


def without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def upstream() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(UPSTREAM.read_text())
    doc["metadata"].pop("annotations")
    return doc


def test_the_document_is_upstreams() -> None:
    """Names, scope, the one served and stored version v1, its schema (required
    jaxReplicaSpecs, the run policy with suspend defaulting to false and the immutable queue,
    the job status), the status and scale subresources, printer columns State and Age."""
    ours = JAXJOB.document({"x-template": TEMPLATE})
    version = ours["spec"]["versions"][0]
    replica = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "jaxReplicaSpecs"]["additionalProperties"]["properties"]
    assert replica["template"] == {"x-template": TEMPLATE}
    replica["template"] = TEMPLATE
    assert without_descriptions(ours) == upstream()


def test_scale_follows_the_workers() -> None:
    """``kubectl scale jaxjob`` changes the Worker replicas; the HPA-facing selector is the one
    the status rules write."""
    version = JAXJOB.document({})["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}, "scale": {
        "specReplicasPath": ".spec.jaxReplicaSpecs.Worker.replicas",
        "statusReplicasPath": ".status.replicaStatuses.Worker.active",
        "labelSelectorPath": ".status.replicaStatuses.Worker.selector"}}
    assert [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]] == [
        ("State", ".status.conditions[-1:].type"), ("Age", ".metadata.creationTimestamp")]


def test_every_part_is_described() -> None:
    """Ours carries a description at the top and on every field of the spec (upstream's are
    Go doc comments; ours are our own words)."""
    schema = JAXJOB.document({})["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["description"].startswith("JAXJob runs a distributed JAX program")
    spec = schema["properties"]["spec"]
    assert all(p.get("description") for p in spec["properties"].values())
    assert PLUGIN.crd is JAXJOB
    assert (JAXJOB.name, JAXJOB.file_name) == ("jaxjobs.kubeflow.org",
                                               "kubeflow.org_jaxjobs.yaml")
