"""What a training-operator kind creates for a job, built with the kind's hooks (pure):
:func:`replica_pod` and :func:`replica_service` for one replica index (also the Warning events
upstream records when it creates the pod), and :func:`initial_children`, everything the first
sync of a new job creates, in upstream's order (``mpi-controller render`` prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mpi_controller.engine.training import gang as gangs
from mpi_controller.engine.training import replicas
from mpi_controller.engine.training.api import API_VERSION, ReplicaSpec, replica_specs, run_policy
from mpi_controller.engine.training.framework import TrainingFramework
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_str
from mpi_controller.kube.owners import controller_ref, require_identity

__all__ = [
    "EVENT_TEMPLATE_RESTART_POLICY",
    "EVENT_TEMPLATE_SCHEDULER_NAME",
    "InitialChildren",
    "initial_children",
    "initial_children_of",
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


class InitialChildren(Protocol):
    """A kind's public ``initial_children`` (e.g.
    :func:`mpi_controller.tensorflow.initial_children`): every kind's, MPIJob's too, takes
    these keywords; a kind may take more, with defaults."""

    def __call__(self, job: Mapping[str, Any], *, cluster_domain: str = "",
                 gang_scheduling: str = "",
                 priority_classes: Mapping[str, int] | None = None) -> list[Obj]: ...


def owner_ref(fw: TrainingFramework, job: Mapping[str, Any]) -> Obj:
    """The controller reference every child of ``job`` carries (``kubeflow.org/v1``)."""
    return controller_ref(job, api_version=API_VERSION, kind=fw.kind)


def replica_pod(fw: TrainingFramework, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                spec: ReplicaSpec, index: int, *, gang: gangs.GangScheduler | None,
                ) -> tuple[Obj, list[Event]]:
    """Pod ``<job>-<rtype>-<index>`` and the Warning events of its creation: the template sets
    a restart policy (the replica's wins); gang scheduling while a template names another
    scheduler."""
    events = []
    if as_str(spec.pod_spec.get("restartPolicy")):
        events.append(Event(WARNING, EVENT_TEMPLATE_RESTART_POLICY, _RESTART_POLICY_MESSAGE))
    if gang is not None and gangs.custom_scheduler_set(specs, gang):
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
                     gang_scheduling: str = "",
                     priority_classes: Mapping[str, int] | None = None) -> list[Obj]:
    """What the first sync of the defaulted, valid ``job`` creates, in creation order, as
    plain dicts ready to send: the framework's companions (an HPA), the PodGroup (with
    ``gang_scheduling``: ``volcano`` or a scheduler-plugins scheduler's name;
    ``priority_classes``, PriorityClass values by name, size its minResources), then per
    replica type its pods and Services; nothing for a suspended job. ValueError naming
    ``metadata.namespace`` or ``metadata.uid`` when the job lacks one. Each kind's public
    ``initial_children`` calls this with its hooks."""
    require_identity(job)
    specs = replica_specs(job, fw.replica_specs_field)
    policy = run_policy(job)
    if policy.suspend:
        return []
    gang = gangs.gang_scheduler(gang_scheduling)
    out: list[Obj] = []
    for companion in fw.companions:
        desired = companion.desired(job, owner_ref(fw, job))
        out += [desired] if desired is not None else []
    if gang is not None:
        out.append(gangs.new_pod_group(job, specs, policy, gang, owner_ref=owner_ref(fw, job),
                                       priority=dict(priority_classes or {}).get))
    for spec in specs.values():
        out += [replica_pod(fw, job, specs, spec, i, gang=gang)[0] for i in range(spec.replicas)]
        out += [replica_service(fw, job, spec, i) for i in range(spec.replicas)]
    return out


def initial_children_of(hooks: Callable[[str], TrainingFramework], kind: str) -> InitialChildren:
    """The public ``initial_children`` of a kind whose hooks ``hooks(cluster_domain)`` makes:
    :func:`initial_children` with them."""

    def kind_initial_children(job: Mapping[str, Any], *, cluster_domain: str = "",
                              gang_scheduling: str = "",
                              priority_classes: Mapping[str, int] | None = None) -> list[Obj]:
        return initial_children(hooks(cluster_domain), job, gang_scheduling=gang_scheduling,
                                priority_classes=priority_classes)

    kind_initial_children.__name__ = kind_initial_children.__qualname__ = "initial_children"
    kind_initial_children.__doc__ = (
        f"The objects the first sync of the defaulted, valid {kind} ``job`` creates: "
        f":func:`mpi_controller.engine.training.children.initial_children` with the {kind} "
        f"hooks.")
    return kind_initial_children
