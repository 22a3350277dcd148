"""Gang scheduling of the training-operator kinds: PodGroups and pod decoration
(training-operator v1.9 ``common/job.go``, ``scheduling.go``, ``util.go``, ``control/
podgroup_control.go``).

``--gang-scheduler-name``: ``volcano`` (any case) selects Volcano (``scheduling.volcano.sh/
v1beta1``), any other non-empty name scheduler-plugins (``scheduling.x-k8s.io/v1alpha1``) with
that name as the pods' ``schedulerName``; empty turns gang scheduling off.

The PodGroup is named after the job, carries the job's annotations and a controller reference:

* ``minMember``: ``schedulingPolicy.minAvailable``, else the total of all replicas;
* Volcano: ``queue`` = ``schedulingPolicy.queue`` or ``default`` (an existing PodGroup's queue
  is kept), ``priorityClassName`` = ``schedulingPolicy.priorityClass``, ``minResources``;
* scheduler-plugins: ``minResources`` (left out when empty) and ``scheduleTimeoutSeconds``;
* ``minResources``: ``schedulingPolicy.minResources``, else the requests (a container without
  requests: its limits) of the first ``minMember`` pods, replica specs taken by the value of
  their template's PriorityClass, highest first (unknown classes count 0; equal values in the
  order the specs are written).

Pods are decorated (:func:`decorate_pod_template`): ``schedulerName`` when the template has
none; Volcano annotations ``scheduling.k8s.io/group-name: <job>`` and ``volcano.sh/task-spec:
<replica type>``, or the scheduler-plugins label ``scheduling.x-k8s.io/pod-group: <job>``.
With Volcano, pods wait until the PodGroup has left phase ``""``/``Pending``
(:func:`delays_pod_creation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, RunPolicy
from mpi_controller.kube.jsonvalue import as_dict, as_record, as_str, json_copy
from mpi_controller.kube.quantity import Quantity, parse_quantity
from mpi_controller.kube.resources import Resource

__all__ = [
    "SCHEDULER_PLUGINS_POD_GROUPS",
    "VOLCANO_POD_GROUPS",
    "GangScheduler",
    "custom_scheduler_set",
    "decorate_pod_template",
    "delays_pod_creation",
    "gang_scheduler",
    "min_member",
    "min_resources",
    "new_pod_group",
    "pod_group_changed",
    "with_spec",
]

VOLCANO = "volcano"
VOLCANO_POD_GROUPS = Resource("scheduling.volcano.sh", "v1beta1", "podgroups", True, "PodGroup")
SCHEDULER_PLUGINS_POD_GROUPS = Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", True,
                                        "PodGroup")
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_TASK_ANNOTATION = "volcano.sh/task-spec"
PLUGINS_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
DEFAULT_QUEUE = "default"

PriorityOf = Callable[[str], int | None]
"""The value of a PriorityClass by name (``None``: unknown)."""


@dataclass(frozen=True)
class GangScheduler:
    """The chosen gang scheduler: its pods' ``schedulerName`` and its PodGroup resource."""

    scheduler_name: str
    volcano: bool

    @property
    def resource(self) -> Resource:
        return VOLCANO_POD_GROUPS if self.volcano else SCHEDULER_PLUGINS_POD_GROUPS


def gang_scheduler(name: str) -> GangScheduler | None:
    """The scheduler for ``--gang-scheduler-name`` (``None``: gang scheduling off)."""
    if not name:
        return None
    if name.lower() == VOLCANO:
        return GangScheduler(VOLCANO, volcano=True)
    return GangScheduler(name, volcano=False)


def custom_scheduler_set(specs: Mapping[str, ReplicaSpec], gang: GangScheduler) -> bool:
    """A replica's template names another scheduler (upstream warns on every pod creation)."""
    return any(as_str(s.pod_spec.get("schedulerName")) not in ("", gang.scheduler_name)
               for s in specs.values())


def decorate_pod_template(template: dict[str, Any], job_name: str, rt: str,
                          gang: GangScheduler) -> None:
    """Point ``template`` (changed in place) at the gang scheduler and the job's PodGroup."""
    spec = template.setdefault("spec", {})
    if not as_str(spec.get("schedulerName")):
        spec["schedulerName"] = gang.scheduler_name
    meta = template.setdefault("metadata", {})
    if gang.volcano:
        meta["annotations"] = {**as_dict(meta.get("annotations")),
                               VOLCANO_GROUP_ANNOTATION: job_name, VOLCANO_TASK_ANNOTATION: rt}
    else:
        meta["labels"] = {**as_dict(meta.get("labels")), PLUGINS_GROUP_LABEL: job_name}


def min_member(specs: Mapping[str, ReplicaSpec], policy: RunPolicy) -> int:
    """``minAvailable``, else the total of all replicas."""
    if policy.scheduling.min_available is not None:
        return policy.scheduling.min_available
    return sum(s.replicas for s in specs.values())


def _add(total: dict[str, Quantity], resources: object) -> None:
    for name, raw in as_dict(resources).items():
        quantity = parse_quantity(raw)
        if quantity is not None:
            total[name] = total[name] + quantity if name in total else quantity


def min_resources(members: int, specs: Mapping[str, ReplicaSpec],
                  priority: PriorityOf) -> dict[str, str]:
    """The resources of the first ``members`` pods (``CalcPGMinResources``; module doc)."""
    ordered = sorted(specs.values(),
                     key=lambda s: -(priority(as_str(s.pod_spec.get("priorityClassName"))) or 0))
    total: dict[str, Quantity] = {}
    counted = 0
    for spec in ordered:
        for _ in range(spec.replicas):
            if counted >= members:
                break
            counted += 1
            for container in spec.containers:
                resources = as_dict(container.get("resources"))
                requests = resources.get("requests")
                _add(total, requests if isinstance(requests, dict) else resources.get("limits"))
    return {name: str(q) for name, q in total.items()}


def new_pod_group(job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec], policy: RunPolicy,
                  gang: GangScheduler, *, owner_ref: Mapping[str, Any], priority: PriorityOf,
                  existing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The job's PodGroup (module doc); with Volcano an ``existing`` group's queue is kept."""
    meta = as_dict(job.get("metadata"))
    members = min_member(specs, policy)
    sched = policy.scheduling
    resources: dict[str, Any] = (json_copy(dict(sched.min_resources))
                                 if sched.min_resources is not None
                                 else min_resources(members, specs, priority))
    spec: dict[str, Any] = {}
    if members:
        spec["minMember"] = members
    if gang.volcano:
        kept = as_str(as_record(as_record(existing).get("spec")).get("queue"))
        spec["queue"] = kept or sched.queue or DEFAULT_QUEUE
        if sched.priority_class:
            spec["priorityClassName"] = sched.priority_class
        spec["minResources"] = resources
    else:
        if resources:
            spec["minResources"] = resources
        if sched.schedule_timeout_seconds is not None:
            spec["scheduleTimeoutSeconds"] = sched.schedule_timeout_seconds
    metadata: dict[str, Any] = {"name": as_str(meta.get("name")),
                                "namespace": as_str(meta.get("namespace")),
                                "ownerReferences": [dict(owner_ref)]}
    annotations = as_dict(meta.get("annotations"))
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"apiVersion": gang.resource.api_version, "kind": gang.resource.kind,
            "metadata": metadata, "spec": spec}


def _comparable(spec: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in spec.items() if v not in (None, "", 0) and k != "minResources"}
    resources = {}
    for name, raw in as_dict(spec.get("minResources")).items():
        quantity = parse_quantity(raw)
        resources[name] = quantity.value if quantity is not None else raw
    return {**out, "minResources": resources}


def pod_group_changed(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """The desired spec differs from the stored one (quantities by value; zeros as unset)."""
    return (_comparable(as_dict(existing.get("spec")))
            != _comparable(as_dict(desired.get("spec"))))


def with_spec(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``existing`` with ``desired``'s spec (what is sent as the update)."""
    out = json_copy(dict(existing))
    out["spec"] = json_copy(dict(as_dict(desired.get("spec"))))
    return out


def delays_pod_creation(gang: GangScheduler, pod_group: Mapping[str, Any] | None) -> bool:
    """Volcano: no pods until the PodGroup is admitted (phase not ``""``/``Pending``)."""
    if not gang.volcano:
        return False
    if pod_group is None:
        return True
    phase = as_str(as_record(pod_group.get("status")).get("phase"))
    return phase in ("", "Pending")
