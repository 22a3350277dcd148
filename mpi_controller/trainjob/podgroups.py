"""Gang scheduling of a TrainJob, as Trainer v2.3.0's ``CoScheduling`` and ``Volcano`` plugins
(``pkg/runtime/framework/plugins/coscheduling``, ``.../volcano``) do it for a runtime with a
``podGroupPolicy``:

* :func:`enforce_pod_group_policy`: with ``coscheduling`` every pod of the JobSet gets the
  label ``scheduling.x-k8s.io/pod-group: <trainjob>``; with ``volcano`` the annotation
  ``scheduling.k8s.io/group-name: <trainjob>``. The scheduler itself is the runtime's
  (``schedulerName`` in its pod templates): Trainer sets none.
* :func:`pod_group`: the PodGroup named as the TrainJob, in its namespace, controlled by it:
  ``minMember`` the sum of the pod sets' counts (after the ML policy set the trainer's),
  ``minResources`` the sum over the pod sets of count times one pod's requests (apimachinery's
  ``resourcehelpers.PodRequests``: the containers' requests summed, each init container's
  (with the sidecars started before it) taken where larger, sidecars (``restartPolicy:
  Always``) added); for coscheduling ``scheduleTimeoutSeconds`` of the policy (the CRD's
  default 60) (``scheduling.x-k8s.io/v1alpha1``); for Volcano the ``queue`` of the runtime's
  template annotation ``scheduling.volcano.sh/queue-name`` (a patch's winning), the
  ``priorityClassName`` of the last replicated Job that has one, and ``networkTopology``
  (``scheduling.volcano.sh/v1beta1``).

Upstream writes the PodGroup (server-side apply) only when it does not exist or while the
TrainJob is suspended; :mod:`.kind` does the same. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpi_controller.kube.quantity import Quantity, parse_quantity
from mpi_controller.kube.resources import Resource
from mpi_controller.trainjob import constants
from mpi_controller.trainjob.info import RuntimeInfo

__all__ = ["COSCHEDULING_LABEL", "PLUGINS_POD_GROUPS", "VOLCANO_ANNOTATION",
           "VOLCANO_POD_GROUPS", "VOLCANO_QUEUE_ANNOTATION", "enforce_pod_group_policy",
           "pod_group", "pod_group_resource", "pod_requests", "single_pod_requests"]

COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
PLUGINS_POD_GROUPS = Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", True, "PodGroup")
VOLCANO_POD_GROUPS = Resource("scheduling.volcano.sh", "v1beta1", "podgroups", True, "PodGroup")
DEFAULT_SCHEDULE_TIMEOUT = 60


def _policy(info: RuntimeInfo) -> Mapping[str, Any]:
    return info.pod_group_policy or {}


def pod_group_resource(info: RuntimeInfo) -> Resource | None:
    """The PodGroup resource the runtime's policy makes, or ``None``."""
    if _policy(info).get("coscheduling") is not None:
        return PLUGINS_POD_GROUPS
    if _policy(info).get("volcano") is not None:
        return VOLCANO_POD_GROUPS
    return None


def enforce_pod_group_policy(info: RuntimeInfo, trainjob: Mapping[str, Any]) -> None:
    """The pods' label (coscheduling) or annotation (Volcano) naming the group."""
    name = trainjob["metadata"]["name"]
    if _policy(info).get("coscheduling") is not None:
        info.pod_labels[COSCHEDULING_LABEL] = name
    if _policy(info).get("volcano") is not None:
        info.pod_annotations[VOLCANO_ANNOTATION] = name


def _requests(container: Mapping[str, Any]) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, raw in ((container.get("resources") or {}).get("requests") or {}).items():
        quantity = parse_quantity(raw)
        if quantity is not None:
            out[name] = quantity
    return out


def _add(total: dict[str, Quantity], more: Mapping[str, Quantity]) -> None:
    for name, quantity in more.items():
        total[name] = total[name] + quantity if name in total else quantity


def _max(into: dict[str, Quantity], other: Mapping[str, Quantity]) -> None:
    for name, quantity in other.items():
        if name not in into or quantity.value > into[name].value:
            into[name] = quantity


def pod_requests(containers: Iterable[Mapping[str, Any]],
                 init_containers: Iterable[Mapping[str, Any]]) -> dict[str, Quantity]:
    """One pod's requests (``resourcehelpers.PodRequests`` with no options, module doc)."""
    total: dict[str, Quantity] = {}
    for container in containers:
        _add(total, _requests(container))
    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for init in init_containers:
        requests = _requests(init)
        if init.get("restartPolicy") == "Always":
            _add(total, requests)
            _add(sidecars, requests)
            during = dict(sidecars)
        else:
            during = dict(requests)
            _add(during, sidecars)
        _max(init_peak, during)
    _max(total, init_peak)
    return total


def _min_resources(info: RuntimeInfo, requests: Mapping[str, Mapping[str, Quantity]]
                   ) -> dict[str, str]:
    total: dict[str, Quantity] = {}
    for pod_set in info.pod_sets:
        _add(total, {k: q * pod_set.count for k, q in requests.get(pod_set.name, {}).items()})
    return {name: str(q) for name, q in total.items()}


def single_pod_requests(info: RuntimeInfo) -> dict[str, dict[str, Quantity]]:
    """Each pod set's one-pod requests, by name (upstream's ``SinglePodRequests``, taken when
    the runtime info is made: before the ML policy changes the pods)."""
    return {p.name: pod_requests(p.containers, p.init_containers) for p in info.pod_sets}


def pod_group(info: RuntimeInfo, trainjob: Mapping[str, Any],
              requests: Mapping[str, Mapping[str, Quantity]]) -> dict[str, Any] | None:
    """The TrainJob's PodGroup (module doc), or ``None`` without a pod-group policy;
    ``requests`` is :func:`single_pod_requests` of the info as made."""
    resource = pod_group_resource(info)
    if resource is None:
        return None
    meta = trainjob["metadata"]
    # minResources even when empty: upstream's apply configuration sets the (empty) map.
    spec: dict[str, Any] = {"minMember": sum(p.count for p in info.pod_sets),
                            "minResources": _min_resources(info, requests)}
    coscheduling = _policy(info).get("coscheduling")
    if coscheduling is not None:
        spec["scheduleTimeoutSeconds"] = coscheduling.get("scheduleTimeoutSeconds",
                                                          DEFAULT_SCHEDULE_TIMEOUT)
    else:
        volcano = _policy(info).get("volcano") or {}
        if VOLCANO_QUEUE_ANNOTATION in info.annotations:
            spec["queue"] = info.annotations[VOLCANO_QUEUE_ANNOTATION]
        for rjob in info.spec.get("replicatedJobs") or []:
            name = (((((rjob.get("template") or {}).get("spec") or {}).get("template") or {})
                     .get("spec") or {}).get("priorityClassName"))
            if name is not None:
                spec["priorityClassName"] = name
        topology = volcano.get("networkTopology")
        if topology is not None:
            spec["networkTopology"] = {"mode": topology.get("mode"),
                                       "highestTierAllowed": topology.get("highestTierAllowed")}
    return {
        "apiVersion": resource.api_version, "kind": resource.kind,
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""),
                     "ownerReferences": [{
                         "apiVersion": f"{constants.GROUP}/{constants.VERSION}",
                         "kind": constants.KIND, "name": meta["name"],
                         "uid": meta.get("uid", ""), "controller": True,
                         "blockOwnerDeletion": True}]},
        "spec": spec,
    }
