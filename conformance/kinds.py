"""The job kinds the differential run knows: what to watch, which CRD each side installs, which
reference operator runs it, and where its corpus is.

Adding a kind (TFJob, PyTorchJob, MPIJob ``v1`` against training-operator v1.9.2) is a new
:class:`KindSpec` here, a corpus directory, and the reference operator's process factory in
``conformance.operators``; the runner, normalizer and comparison are shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.kube import Resource
from conformance.operators import REPO, reference

Obj = dict[str, Any]
HERE = Path(__file__).resolve().parent

CORE = [Resource("v1", "Pod", "pods"), Resource("v1", "Service", "services"),
        Resource("v1", "ConfigMap", "configmaps"), Resource("v1", "Secret", "secrets"),
        Resource("batch/v1", "Job", "jobs"), Resource("v1", "Event", "events")]

POD_GROUPS = {
    "volcano-podgroups": Resource("scheduling.volcano.sh/v1beta1", "PodGroup", "podgroups"),
    "scheduler-plugins-podgroups": Resource("scheduling.x-k8s.io/v1alpha1", "PodGroup",
                                            "podgroups"),
}


def pod_group_crd(resource: Resource) -> Obj:
    """A PodGroup CRD that keeps any field (the gang schedulers themselves are absent; the
    operators only create and update PodGroups, which is what is compared)."""
    group, version = resource.api_version.split("/")
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{resource.plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": resource.kind, "plural": resource.plural,
                           "singular": resource.kind.lower(), "listKind": f"{resource.kind}List"},
                 "versions": [{"name": version, "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {
                                   "type": "object",
                                   "x-kubernetes-preserve-unknown-fields": True}}}]},
    }


@dataclass(frozen=True)
class KindSpec:
    name: str
    api_version: str
    kind: str
    plural: str
    reference: str                         # the reference operator (hack/reference-operators.sh)
    corpus: Path
    crds: dict[str, Callable[[], Path]]    # side -> the CRD file that side installs
    children: list[Resource] = field(default_factory=lambda: list(CORE))
    optional: dict[str, Resource] = field(default_factory=dict)  # per-group extra resources

    def resource(self) -> Resource:
        return Resource(self.api_version, self.kind, self.plural)

    def upstream_file(self, rel: str) -> Path:
        return Path(reference("module-dir", self.reference)) / rel


MPIJOB_V2BETA1 = KindSpec(
    name="mpijob-v2beta1", api_version="kubeflow.org/v2beta1", kind="MPIJob", plural="mpijobs",
    reference="mpi-operator", corpus=HERE / "corpus" / "mpijob-v2beta1",
    crds={"go": lambda: Path(reference("module-dir", "mpi-operator"))
          / "manifests" / "base" / "kubeflow.org_mpijobs.yaml",
          "ours": lambda: REPO / "deploy" / "crd" / "kubeflow.org_mpijobs.yaml"},
    optional=dict(POD_GROUPS),
)

KINDS = {k.name: k for k in (MPIJOB_V2BETA1,)}
