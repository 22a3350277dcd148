"""What a training-operator kind creates for a job, built with the kind's hooks (pure):
:func:`replica_pod` and :func:`replica_service` for one replica index (also the Warning events
upstream records when it creates the pod), and :func:`initial_children`, everything the first
sync of a new job creates, in upstream's order (``mpi-controller render`` prints it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training import gang as gang_scheduling
from mpi_controller.engine.training import replicas
from mpi_controller.engine.training.api import API_VERSION, ReplicaSpec, replica_specs, run_policy
from mpi_controller.engine.training.framework import TrainingFramework
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_str
from mpi_controller.kube.owners import controller_ref

__all__ = [
    "EVENT_TEMPLATE_RESTART_POLICY",
    "EVENT_TEMPLATE_SCHEDULER_NAME",
    "initial_children",
    "owner_ref",
    "replica_pod",
    "replica_service",
]

EVENT_TEMPLATE_RESTART_POLICY = "SetPodTemplateRestartPolicy"
EVENT_TEMPLATE_SCHEDULER_NAME = "SetPodTemplateSchedulerName"
_RESTART_POLICY_MESSAGE = ("Restart policy in pod template will be overwritten by restart "
                           "policy in replica spec")
_SCHEDULER_NAME_MESSAGE = ("Another scheduler is specified when gang-scheduling is enabled and "
                           "it will not be overwritten")


def owner_ref(fw: TrainingFramework, job: Mapping[str, Any]) -> Obj:
    """The controller reference every child of ``job`` carries (``kubeflow.org/v1``)."""
    return controller_ref(job, api_version=API_VERSION, kind=fw.kind)


def replica_pod(fw: TrainingFramework, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                spec: ReplicaSpec, index: int, *, gang: gang_scheduling.GangScheduler | None,
                ) -> tuple[Obj, list[Event]]:
    """Pod ``<job>-<rtype>-<index>`` and the Warning events of its creation: the template sets
    a restart policy (the replica's wins); gang scheduling while a template names another
    scheduler."""
    events = []
    if as_str(spec.pod_spec.get("restartPolicy")):
        events.append(Event(WARNING, EVENT_TEMPLATE_RESTART_POLICY, _RESTART_POLICY_MESSAGE))
    if gang is not None and gang_scheduling.custom_scheduler_set(specs, gang):
        events.append(Event(WARNING, EVENT_TEMPLATE_SCHEDULER_NAME, _SCHEDULER_NAME_MESSAGE))

    def cluster_spec(template: Obj, rtype: str, i: int) -> None:
        fw.set_cluster_spec(job, template, rtype, i)

    pod = replicas.new_pod(job, spec, index, controller_name=fw.controller_name,
                     owner_ref=owner_ref(fw, job),
                     master_role=fw.is_master_role(specs, spec.rtype, index),
                     cluster_spec=cluster_spec, gang=gang)
    return pod, events


def replica_service(fw: TrainingFramework, job: Mapping[str, Any], spec: ReplicaSpec,
                    index: int) -> Obj:
    """Service ``<job>-<rtype>-<index>``; ValueError ``failed to find the port`` when the
    template has no container named after the kind's default."""
    ports = replicas.service_ports(spec, fw.default_container_name)
    if ports is None:
        raise ValueError("failed to find the port")
    return replicas.new_service(job, spec, index, controller_name=fw.controller_name,
                          owner_ref=owner_ref(fw, job), ports=ports)


def initial_children(fw: TrainingFramework, job: Mapping[str, Any], *,
                     gang: gang_scheduling.GangScheduler | None,
                     priority: gang_scheduling.PriorityOf) -> list[Obj]:
    """What the first sync of the defaulted, valid ``job`` creates: the framework's companions
    (an HPA), the PodGroup (with gang scheduling), then per replica type its pods and Services
    (nothing for a suspended job)."""
    specs = replica_specs(job, fw.replica_specs_field)
    policy = run_policy(job)
    if policy.suspend:
        return []
    out: list[Obj] = []
    for companion in fw.companions:
        desired = companion.desired(job, owner_ref(fw, job))
        out += [desired] if desired is not None else []
    if gang is not None:
        out.append(gang_scheduling.new_pod_group(job, specs, policy, gang,
                                                 owner_ref=owner_ref(fw, job), priority=priority))
    for spec in specs.values():
        out += [replica_pod(fw, job, specs, spec, i, gang=gang)[0] for i in range(spec.replicas)]
        out += [replica_service(fw, job, spec, i) for i in range(spec.replicas)]
    return out
