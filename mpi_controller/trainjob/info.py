"""What a TrainJob's runtime gives its plugins (Trainer v2.3.0's ``runtime.Info``, made by
``pkg/runtime/core/trainingruntime.go`` ``newRuntimeInfo``): the JobSet spec of the runtime's
template (a deep copy the plugins change), the labels and annotations the JobSet gets, the ML
policy, and one :class:`PodSet` per replicated Job, in the template's order.

A pod set's count is its Job's ``parallelism`` (default 1), or, for the replicated Job
labelled ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` when the runtime has an ML
policy, the policy's ``numNodes`` (default 1); at least 1. The TrainJob's
``trainer.resourcesPerNode`` is merged (key by key, the TrainJob's winning) into the ``node``
container of that Job (and of the Job named ``node`` when the MPI policy runs the launcher as
a node). The TrainJob's runtime patches are applied first: their template labels and
annotations join the runtime's (a later patch's value winning), and their JobSet spec patches
are merged into the spec (:func:`~mpi_controller.trainjob.patches.merge_runtime_patches`,
which raises :class:`~mpi_controller.trainjob.patches.PatchError` where upstream's merge
fails).

Pure: plain JSON in, plain JSON out; the containers of a :class:`PodSet` are the dicts inside
:attr:`RuntimeInfo.spec`, so a plugin's change to them is a change to the JobSet spec.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.trainjob import constants
from mpi_controller.trainjob.patches import merge_runtime_patches

__all__ = ["PodSet", "RuntimeInfo", "pod_spec", "runtime_info"]

Obj = dict[str, Any]


@dataclass
class PodSet:
    """One replicated Job of the runtime: its name, ancestor step (or ``None``), pod count and
    its pod spec's containers, init containers and volumes (live dicts of the spec)."""

    name: str
    ancestor: str | None
    count: int
    containers: list[Obj]
    init_containers: list[Obj]
    volumes: list[Obj]

    def container(self, name: str) -> Obj | None:
        """The container ``name``, else the init container ``name`` (upstream's
        ``FindContainerByPodSetName``)."""
        for container in (*self.containers, *self.init_containers):
            if container.get("name") == name:
                return container
        return None


@dataclass
class RuntimeInfo:
    spec: Obj
    labels: dict[str, str]
    annotations: dict[str, str]
    ml_policy: Obj | None
    pod_group_policy: Obj | None
    pod_sets: list[PodSet] = field(default_factory=list)
    pod_labels: dict[str, str] = field(default_factory=dict)
    """Labels every pod gets (the gang-scheduling plugins')."""
    pod_annotations: dict[str, str] = field(default_factory=dict)
    """Annotations every pod gets (the Volcano plugin's)."""

    def by_ancestor(self, ancestor: str) -> PodSet | None:
        return next((p for p in self.pod_sets if p.ancestor == ancestor), None)

    def by_name(self, name: str) -> PodSet | None:
        return next((p for p in self.pod_sets if p.name == name), None)


def pod_spec(replicated_job: Obj) -> Obj:
    """The pod spec of a replicated Job (made where missing)."""
    job_spec = replicated_job.setdefault("template", {}).setdefault("spec", {})
    spec: Obj = job_spec.setdefault("template", {}).setdefault("spec", {})
    return spec


def _merge_resources(base: Mapping[str, Any], override: Mapping[str, Any]) -> Obj:
    """``trainingruntimeutil.MergeResourceRequirements``: limits and requests merged key by
    key (the override's values win), claims replaced when the override has them."""
    merged: Obj = copy.deepcopy(dict(base))
    for key in ("limits", "requests"):
        if override.get(key):
            merged[key] = {**(base.get(key) or {}), **override[key]}
    if override.get("claims"):
        merged["claims"] = copy.deepcopy(override["claims"])
    return merged


def _run_launcher_as_node(ml_policy: Mapping[str, Any] | None) -> bool:
    return bool(((ml_policy or {}).get("mpi") or {}).get("runLauncherAsNode"))


def runtime_info(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> RuntimeInfo:
    """The runtime info of ``trainjob`` on a runtime whose ``spec`` is ``runtime_spec``."""
    job_spec = trainjob.get("spec") or {}
    template = runtime_spec.get("template") or {}
    meta = template.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    annotations = dict(meta.get("annotations") or {})
    for patch in job_spec.get("runtimePatches") or []:
        patched = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {})
        labels.update((patched.get("metadata") or {}).get("labels") or {})
        annotations.update((patched.get("metadata") or {}).get("annotations") or {})
    spec: Obj = merge_runtime_patches(template.get("spec") or {}, trainjob)
    ml_policy = copy.deepcopy(runtime_spec.get("mlPolicy"))
    info = RuntimeInfo(spec=spec, labels=labels, annotations=annotations, ml_policy=ml_policy,
                       pod_group_policy=runtime_spec.get("podGroupPolicy"))
    resources = (job_spec.get("trainer") or {}).get("resourcesPerNode")
    for rjob in spec.get("replicatedJobs") or []:
        count = ((rjob.get("template") or {}).get("spec") or {}).get("parallelism", 1)
        ancestor = (((rjob.get("template") or {}).get("metadata") or {}).get("labels")
                    or {}).get(constants.LABEL_TRAINJOB_ANCESTOR)
        if ancestor == constants.ANCESTOR_TRAINER and ml_policy is not None:
            count = ml_policy.get("numNodes", 1)
        pod = pod_spec(rjob)
        trainer_node = ancestor == constants.ANCESTOR_TRAINER and ml_policy is not None
        launcher_node = _run_launcher_as_node(ml_policy) and rjob.get("name") == constants.NODE
        if resources is not None and (trainer_node or launcher_node):
            for container in pod.get("containers") or []:
                if container.get("name") == constants.NODE:
                    container["resources"] = _merge_resources(container.get("resources") or {},
                                                              resources)
                    break
        info.pod_sets.append(PodSet(
            name=rjob.get("name", ""), ancestor=ancestor, count=max(int(count), 1),
            containers=pod.setdefault("containers", []),
            init_containers=pod.setdefault("initContainers", []),
            volumes=pod.setdefault("volumes", [])))
    return info
