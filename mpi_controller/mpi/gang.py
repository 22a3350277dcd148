"""Gang scheduling: PodGroups (Volcano or scheduler-plugins) and pod template decoration.

``gang_scheduling`` is the ``--gang-scheduling`` flag value: ``""`` disables it, ``volcano``
selects Volcano (``scheduling.volcano.sh/v1beta1``), and any other value selects
scheduler-plugins (``scheduling.x-k8s.io/v1alpha1``) with that value as the pods'
``schedulerName`` (e.g. ``scheduler-plugins-scheduler``).

PodGroup sizing (upstream podgroup.go):

* ``minMember`` = ``schedulingPolicy.minAvailable``, else Worker replicas + 1;
* ``minResources`` = ``schedulingPolicy.minResources`` verbatim, else nothing when minMember
  is 0, else the sum of container requests (limits for names missing from requests) times
  replicas over the replica specs. Replica specs are ordered by the value of their pod
  template's PriorityClass (``priority_classes`` maps names to values; unknown names count
  0), highest first; when the first two specs' replicas exceed minMember, the Worker (equal
  priorities) or the lower-priority spec is cut to minMember - 1.

With the ``GangWaitForWorkersReady`` gate, a job whose launcher waits for its workers is sized
by the workers alone: minMember = Worker replicas, minResources over the Worker spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_int, as_list, as_record, as_str, json_copy
from mpi_controller.kube.quantity import Quantity, parse_quantity
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.v2beta1.types import MPIJob, ReplicaSpec, parse_mpi_job

__all__ = [
    "GANG_SCHEDULER_VOLCANO",
    "POD_GROUP_LABEL",
    "SCHEDULER_PLUGINS_POD_GROUP",
    "VOLCANO_GROUP_NAME_ANNOTATION",
    "VOLCANO_POD_GROUP",
    "VOLCANO_QUEUE_NAME_ANNOTATION",
    "PodGroupAPI",
    "calculate_min_available",
    "calculate_min_resources",
    "calculate_priority_class_name",
    "decorate_pod_template",
    "new_pod_group",
    "pod_group_api",
    "pod_group_needs_update",
    "priority_class_values",
    "update_pod_group",
]

GANG_SCHEDULER_VOLCANO = "volcano"
VOLCANO_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE_NAME_ANNOTATION = "scheduling.volcano.sh/queue-name"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


@dataclass(frozen=True)
class PodGroupAPI:
    """Where a PodGroup kind lives: ``apiVersion`` is ``group/version``."""

    group: str
    version: str
    plural: str = "podgroups"
    kind: str = "PodGroup"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


VOLCANO_POD_GROUP = PodGroupAPI("scheduling.volcano.sh", "v1beta1")
SCHEDULER_PLUGINS_POD_GROUP = PodGroupAPI("scheduling.x-k8s.io", "v1alpha1")


def pod_group_api(gang_scheduling: str) -> PodGroupAPI | None:
    """The PodGroup API for the flag value, or ``None`` when gang scheduling is off."""
    if not gang_scheduling:
        return None
    if gang_scheduling == GANG_SCHEDULER_VOLCANO:
        return VOLCANO_POD_GROUP
    return SCHEDULER_PLUGINS_POD_GROUP


def decorate_pod_template(template: dict[str, Any], job_name: str, gang_scheduling: str) -> None:
    """Set ``schedulerName`` and the PodGroup annotation (Volcano) or label (scheduler-plugins)
    on ``template`` in place. No-op when gang scheduling is off."""
    if not gang_scheduling:
        return
    spec = template["spec"] = as_dict(template.get("spec"))
    spec["schedulerName"] = gang_scheduling
    meta = template["metadata"] = as_dict(template.get("metadata"))
    if gang_scheduling == GANG_SCHEDULER_VOLCANO:
        meta["annotations"] = {
            **as_dict(meta.get("annotations")),
            VOLCANO_GROUP_NAME_ANNOTATION: job_name,
        }
    else:
        meta["labels"] = {**as_dict(meta.get("labels")), POD_GROUP_LABEL: job_name}


def priority_class_values(priority_classes: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """``{name: value}`` from ``scheduling.k8s.io/v1`` PriorityClass objects."""
    out: dict[str, int] = {}
    for pc in priority_classes:
        name = as_str(as_record(pc.get("metadata")).get("name"))
        value = as_int(pc.get("value"))
        if name and value is not None:
            out[name] = value
    return out


def calculate_min_available(job: MPIJob, *, workers_only: bool = False) -> int:
    """``schedulingPolicy.minAvailable``, else Worker replicas + 1 (also with
    runLauncherAsWorker), or Worker replicas alone with ``workers_only``."""
    policy = job.spec.run_policy.scheduling_policy
    if policy is not None and policy.min_available is not None:
        return policy.min_available
    return job.worker_replicas + (0 if workers_only else 1)


def calculate_priority_class_name(job: MPIJob) -> str:
    """schedulingPolicy.priorityClass, else the Launcher's, else the Worker's priorityClassName."""
    policy = job.spec.run_policy.scheduling_policy
    if policy is not None and policy.priority_class:
        return policy.priority_class
    for replica in (job.spec.launcher, job.spec.worker):
        if replica is not None and as_str(replica.pod_spec.get("priorityClassName")):
            return as_str(replica.pod_spec.get("priorityClassName"))
    return ""


@dataclass
class _Entry:
    replica_type: str
    priority: int
    replicas: int | None
    spec: ReplicaSpec


def _ordered_entries(job: MPIJob, priority_classes: Mapping[str, int],
                     workers_only: bool = False) -> list[_Entry]:
    entries = []
    for rtype, replica in (job.spec.mpi_replica_specs or {}).items():
        if replica is None or (workers_only and rtype != constants.REPLICA_TYPE_WORKER):
            continue
        pc = as_str(replica.pod_spec.get("priorityClassName"))
        value = priority_classes.get(pc, 0) if pc else 0
        entries.append(_Entry(rtype, value, replica.replicas, replica))
    entries.sort(key=lambda e: e.priority, reverse=True)  # stable
    return entries


def _cut_to_min_member(entries: list[_Entry], min_member: int) -> None:
    total = sum((e.replicas or 0) for e in entries[:2])
    if total <= min_member:
        return
    if len(entries) > 1 and entries[0].priority != entries[1].priority:
        entries[1].replicas = min_member - 1
        return
    for entry in entries:
        if entry.replica_type == constants.REPLICA_TYPE_WORKER:
            entry.replicas = min_member - 1
            return


def _container_resources(container: object) -> dict[str, Quantity]:
    resources = as_dict(as_record(container).get("resources"))
    merged: dict[str, Quantity] = {}
    for source in (as_dict(resources.get("requests")), as_dict(resources.get("limits"))):
        for name, raw in source.items():
            quantity = parse_quantity(raw)
            if quantity is not None and name not in merged:
                merged[name] = quantity
    return merged


def _sum_resources(entries: list[_Entry]) -> dict[str, Quantity]:
    total: dict[str, Quantity] = {}
    for entry in entries:
        if entry.replicas is None:
            continue
        for container in as_list(entry.spec.pod_spec.get("containers")):
            for name, quantity in _container_resources(container).items():
                scaled = quantity * entry.replicas
                total[name] = total[name] + scaled if name in total else scaled
    return total


def calculate_min_resources(
    job: MPIJob, min_member: int, priority_classes: Mapping[str, int] | None = None, *,
    workers_only: bool = False,
) -> dict[str, Any] | None:
    """PodGroup ``minResources`` (see the module docstring); ``None`` means "not set".
    ``workers_only`` leaves the Launcher spec out."""
    policy = job.spec.run_policy.scheduling_policy
    if policy is not None and policy.min_resources is not None:
        return json_copy(dict(policy.min_resources))
    if min_member == 0:
        return None
    entries = _ordered_entries(job, priority_classes or {}, workers_only)
    if not entries:
        return None
    _cut_to_min_member(entries, min_member)
    return {name: str(q) for name, q in sorted(_sum_resources(entries).items())}


def new_pod_group(
    job: Mapping[str, Any],
    *,
    gang_scheduling: str,
    priority_classes: Mapping[str, int] | None = None,
    workers_only: bool = False,
) -> dict[str, Any] | None:
    """The PodGroup ``<job>`` for the chosen gang scheduler, or ``None`` when it is off.

    ``workers_only`` sizes the group by the workers alone (when ``minAvailable`` is unset):
    for a job whose launcher is created only once the workers are ready (the
    ``GangWaitForWorkersReady`` gate, :mod:`~mpi_controller.mpi.features`)."""
    api = pod_group_api(gang_scheduling)
    if api is None:
        return None
    view = parse_mpi_job(job)
    policy = view.spec.run_policy.scheduling_policy
    workers_only = workers_only and (policy is None or policy.min_available is None)
    min_member = calculate_min_available(view, workers_only=workers_only)
    min_resources = calculate_min_resources(view, min_member, priority_classes,
                                            workers_only=workers_only)
    spec: dict[str, Any] = {}
    if min_member:
        spec["minMember"] = min_member
    if api is VOLCANO_POD_GROUP:
        queue = policy.queue if policy is not None and policy.queue else ""
        queue = queue or view.annotations.get(VOLCANO_QUEUE_NAME_ANNOTATION, "")
        if queue:
            spec["queue"] = queue
        priority_class = calculate_priority_class_name(view)
        if priority_class:
            spec["priorityClassName"] = priority_class
        if min_resources is not None:
            spec["minResources"] = min_resources
    else:
        timeout = policy.schedule_timeout_seconds if policy is not None else None
        spec["scheduleTimeoutSeconds"] = timeout if timeout is not None else 0
        if min_resources:
            spec["minResources"] = min_resources
    return {
        "apiVersion": api.api_version,
        "kind": api.kind,
        "metadata": {
            "name": naming.pod_group_name(view.name),
            "namespace": view.namespace,
            "ownerReferences": [naming.controller_ref(job)],
        },
        "spec": spec,
    }


def _normalized_spec(pod_group: Mapping[str, Any]) -> dict[str, Any]:
    spec = dict(as_dict(pod_group.get("spec")))
    resources = spec.get("minResources")
    if isinstance(resources, dict):
        parsed = {k: parse_quantity(v) for k, v in resources.items()}
        spec["minResources"] = {
            k: (q.value if q is not None else resources[k]) for k, q in parsed.items()
        }
    return {k: v for k, v in spec.items() if v not in (None, "", 0, {})}


def pod_group_needs_update(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """True if the specs differ semantically (quantities by value; zero values = unset)."""
    return _normalized_spec(existing) != _normalized_spec(desired)


def update_pod_group(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``existing`` with ``desired``'s spec."""
    out = json_copy(dict(existing))
    out["spec"] = json_copy(desired.get("spec"))
    return out
