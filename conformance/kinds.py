"""The job kinds the differential run knows: what to watch, which CRD each side installs, which
reference operator runs it, and where its corpus is.

Adding a kind is a new :class:`KindSpec` here and a corpus directory (``corpus/<name>/``);
the runner, normalizer, comparison and reference operator processes are shared. Every
``kubeflow.org/v1`` kind the controller serves (TFJob, PyTorchJob, XGBoostJob, ...) is one,
compared with training-operator v1.9.2 (:func:`registered_training_kinds`): it needs only its
corpus directory and its differences section in ``docs/training-kinds.md`` (the rules in
``conformance.intended`` name rows there).

TrainJob (``trainer.kubeflow.org/v1alpha1``) is compared with Kubeflow Trainer v2.3.0's
controller manager (:mod:`conformance.trainer`): both make JobSets, which the local cluster's
JobSet controller (its ``jobset`` addon, ``addons``) runs for either; the runtimes both read are
installed once before the run (``setup``).

A kind ours serves through its conversion webhook (MPIJob ``v1``: the reference's CRD has the
same name, ``mpijobs.kubeflow.org``, and serves that version alone) sets ``conversion``: see
:class:`KindSpec`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.kube import Resource
from conformance.operators import REPO, TRAINER_CRDS, reference

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


def crd_as_v1(crd: Obj) -> Obj:
    """``crd`` as an ``apiextensions.k8s.io/v1`` CRD (a v1 one is returned as it is).

    A ``v1beta1`` CRD (the API that mpi-operator v0.2.3 shipped, removed in Kubernetes 1.22) is
    converted the way the API server converted stored ones: ``version`` becomes the one entry
    of ``versions`` (served, stored), ``validation``, ``subresources`` and
    ``additionalPrinterColumns`` (``JSONPath`` as ``jsonPath``) move into it, and
    ``names.listKind`` gets the server's default (``<kind>List``). A v1 schema must
    be structural, and v1beta1's default ``preserveUnknownFields: true`` kept every field: so
    each object node of the schema gets ``type: object`` and
    ``x-kubernetes-preserve-unknown-fields: true``, and the schema accepts what it did then.
    """
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1beta1":
        return crd
    spec = dict(crd["spec"])
    versions = spec.pop("versions", None) or [
        {"name": spec["version"], "served": True, "storage": True}]
    spec.pop("version", None)
    spec.pop("preserveUnknownFields", None)
    names = spec.get("names") or {}
    spec["names"] = {"listKind": f"{names.get('kind', '')}List", **names}  # the server's default
    schema = _structural((spec.pop("validation", None) or {}).get("openAPIV3Schema", {}))
    subresources = spec.pop("subresources", None)
    columns = [{("jsonPath" if k == "JSONPath" else k): v for k, v in column.items()}
               for column in spec.pop("additionalPrinterColumns", None) or []]
    spec["versions"] = [{**version, "schema": {"openAPIV3Schema": schema},
                         **({"subresources": subresources} if subresources else {}),
                         **({"additionalPrinterColumns": columns} if columns else {})}
                        for version in versions]
    return {**crd, "apiVersion": "apiextensions.k8s.io/v1", "spec": spec}


def _structural(node: Obj) -> Obj:
    out = dict(node)
    out["type"] = out.get("type") or "object"
    if out["type"] == "object":
        out["x-kubernetes-preserve-unknown-fields"] = True
        if "properties" in out:
            out["properties"] = {k: _structural(v) for k, v in out["properties"].items()}
    return out


@dataclass(frozen=True)
class KindSpec:
    """One job kind of the differential run.

    ``flags_for_ours`` renames the reference operator's flags our controller spells
    differently (the corpus is written in the reference operator's flags; the value is the
    same). ``readme_sections`` are the headings (in ``docs/``: ``differences.md``, ``mpijob.md``,
    ``training-kinds.md``) whose differences tables the kind's intended differences
    (``conformance.intended``) must name.

    ``addons``: the local cluster's addons the kind needs (``hack/local-cluster.sh up --addons``).
    ``setup``: run once before the corpus, with the admin client and the corpus directory (what
    both sides read but neither owns, e.g. TrainJob's runtimes).

    ``conversion``: ours serves ``api_version`` from its multi-version CRD through its
    conversion webhook, and the reference's CRD has the same name. Each side then deletes
    the installed CRD and waits until it is gone before creating its own (a CRD cannot drop
    a stored version in place); ours serves the webhook itself on 127.0.0.1, where the local
    cluster's API server reaches it; the CRDs are compared at this version's entry of
    ``spec.versions``; and ours is installed again when the kind is done.
    """

    name: str
    api_version: str
    kind: str
    plural: str
    reference: str                         # the reference operator (hack/reference-operators.sh)
    corpus: Path
    crds: dict[str, Callable[[], Path]]    # side -> the CRD file that side installs
    readme_sections: tuple[str, ...]
    replica_specs: str = ""                # the spec's map of replica specs
    children: list[Resource] = field(default_factory=lambda: list(CORE))
    optional: dict[str, Resource] = field(default_factory=dict)  # per-group extra resources
    flags_for_ours: dict[str, str] = field(default_factory=dict)
    conversion: bool = False
    addons: tuple[str, ...] = ()
    setup: Callable[[Any, Path], None] | None = None

    @property
    def version(self) -> str:
        """The version of ``api_version`` (``v1`` of ``kubeflow.org/v1``)."""
        return self.api_version.rpartition("/")[2]

    def resource(self) -> Resource:
        return Resource(self.api_version, self.kind, self.plural)

    def upstream_file(self, rel: str) -> Path:
        return Path(reference("module-dir", self.reference)) / rel

    def ours_flags(self, flags: list[str]) -> list[str]:
        """``flags`` as our controller spells them (``--name value`` or ``--name=value``)."""
        out = []
        for flag in flags:
            name, eq, value = flag.partition("=")
            name = self.flags_for_ours.get(name, name)
            out.append(f"{name}{eq}{value}")
        return out


MPIJOB_V2BETA1 = KindSpec(
    name="mpijob-v2beta1", api_version="kubeflow.org/v2beta1", kind="MPIJob", plural="mpijobs",
    reference="mpi-operator", corpus=HERE / "corpus" / "mpijob-v2beta1",
    crds={"go": lambda: Path(reference("module-dir", "mpi-operator"))
          / "manifests" / "base" / "kubeflow.org_mpijobs.yaml",
          "ours": lambda: REPO / "deploy" / "crd" / "kubeflow.org_mpijobs.yaml"},
    readme_sections=("Differences from the Go operator",),
    replica_specs="mpiReplicaSpecs",
    optional=dict(POD_GROUPS),
)


HPA = Resource("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers")


def training_operator_kind(name: str, kind: str, plural: str, replica_specs: str,
                           readme_kind: str, *, also_readme: tuple[str, ...] = (),
                           children: tuple[Resource, ...] = (),
                           conversion: bool = False) -> KindSpec:
    """A ``kubeflow.org/v1`` kind of training-operator v1.9.2: its CRD from the module's
    ``manifests/base/crds``, ours from ``deploy/crd``; the core resources and ``children``
    are recorded (an object of a kind the reference operator never makes still shows),
    PodGroups in the gang groups; the section "Differences from training-operator v1.9.2
    (<readme_kind>)" of ``docs/``, and those of the kinds in ``also_readme`` whose rows apply to it
    too. ``conversion``: see :class:`KindSpec`."""
    crd = f"kubeflow.org_{plural}.yaml"
    return KindSpec(
        name=name, api_version="kubeflow.org/v1", kind=kind, plural=plural,
        reference="training-operator", corpus=HERE / "corpus" / name,
        crds={"go": lambda: Path(reference("module-dir", "training-operator"))
              / "manifests" / "base" / "crds" / crd,
              "ours": lambda: REPO / "deploy" / "crd" / crd},
        readme_sections=tuple(f"Differences from training-operator v1.9.2 ({k})"
                              for k in (readme_kind, *also_readme)),
        replica_specs=replica_specs, children=[*CORE, *children],
        optional=dict(POD_GROUPS), flags_for_ours={"--controller-threads": "--threadiness"},
        conversion=conversion,
    )


def registered_training_kinds() -> list[KindSpec]:
    """The ``kubeflow.org/v1`` training-operator kinds the controller serves
    (:mod:`mpi_controller.kinds`), each compared with training-operator v1.9.2: its corpus
    ``corpus/<scheme>-v1``, the children its plugin names recorded too (an elastic
    PyTorchJob's HorizontalPodAutoscaler); the TFJob rows apply to every kind (the engine they
    share)."""
    from mpi_controller.kinds import plugins

    return [training_operator_kind(
        f"{p.scheme}-v1", p.kind, p.plural, p.replica_specs, p.kind,
        also_readme=() if p.kind == "TFJob" else ("TFJob",),
        children=tuple(Resource(f"{c.group}/{c.version}" if c.group else c.version, c.kind,
                                c.plural) for c in p.children))
        for p in plugins() if p.api_versions == ("v1",) and p.group == "kubeflow.org"]


# The launcher's identity: training-operator's MPIJob v1 controller makes a ServiceAccount, a
# Role and a RoleBinding per job. Ours serves v1 from the v2beta1 CRD through conversion; the
# TFJob rows (the engine both kinds share) apply to it too.
LAUNCHER_RBAC = (Resource("v1", "ServiceAccount", "serviceaccounts"),
                 Resource("rbac.authorization.k8s.io/v1", "Role", "roles"),
                 Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"))
MPIJOB_V1 = training_operator_kind("mpijob-v1", "MPIJob", "mpijobs", "mpiReplicaSpecs",
                                   "MPIJob v1", also_readme=("TFJob",),
                                   children=LAUNCHER_RBAC, conversion=True)

# mpi-operator v0.2.3 (cmd/mpi-operator.v1alpha2) on the CRD of its deploy/v1alpha2 manifest
# (apiextensions v1beta1, installed as v1: crd_as_v1): the same launcher identity as MPIJob v1,
# a worker StatefulSet and a launcher batch Job.
STATEFULSETS = Resource("apps/v1", "StatefulSet", "statefulsets")
MPIJOB_V1ALPHA2 = KindSpec(
    name="mpijob-v1alpha2", api_version="kubeflow.org/v1alpha2", kind="MPIJob",
    plural="mpijobs", reference="mpi-operator-v0.2", corpus=HERE / "corpus" / "mpijob-v1alpha2",
    crds={"go": lambda: Path(reference("module-dir", "mpi-operator-v0.2"))
          / "deploy" / "v1alpha2" / "mpi-operator.yaml",
          "ours": MPIJOB_V2BETA1.crds["ours"]},
    readme_sections=("Differences from mpi-operator v0.2.3 (MPIJob v1alpha2)",),
    replica_specs="mpiReplicaSpecs", children=[*CORE, STATEFULSETS, *LAUNCHER_RBAC],
    conversion=True,
)

JOBSETS = Resource("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets")


def _trainjob_setup(kube: Any, corpus: Path) -> None:
    """The runtime CRDs, the five shipped ClusterTrainingRuntimes and the corpus's own
    (``<corpus>/runtimes/*.yaml``)."""
    from conformance.trainer import install_runtimes, shipped_runtimes

    install_runtimes(kube, [*shipped_runtimes(), *sorted((corpus / "runtimes").glob("*.yaml"))])


# Kubeflow Trainer v2.3.0 (cmd/trainer-controller-manager): each side installs its TrainJob CRD
# (the schemas are equal up to descriptions); the JobSets and what the JobSet controller makes of
# them (Jobs, pods, the headless Service) are recorded with the MPI policy's ConfigMap and Secret.
TRAINJOB_V1ALPHA1 = KindSpec(
    name="trainjob-v1alpha1", api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob",
    plural="trainjobs", reference="trainer", corpus=HERE / "corpus" / "trainjob-v1alpha1",
    crds={"go": lambda: Path(reference("module-dir", "trainer"))
          / "manifests" / "base" / "crds" / "trainer.kubeflow.org_trainjobs.yaml",
          "ours": lambda: TRAINER_CRDS / "trainer.kubeflow.org_trainjobs.yaml"},
    readme_sections=("Differences from Trainer v2.3.0",),
    children=[*CORE, JOBSETS], optional=dict(POD_GROUPS),
    flags_for_ours={"--controller-threads": "--threadiness"},
    addons=("jobset",), setup=_trainjob_setup,
)

KINDS = {k.name: k for k in (MPIJOB_V2BETA1, *registered_training_kinds(), MPIJOB_V1,
                             MPIJOB_V1ALPHA2, TRAINJOB_V1ALPHA1)}
TFJOB_V1 = KINDS["tfjob-v1"]
PYTORCHJOB_V1 = KINDS["pytorchjob-v1"]
