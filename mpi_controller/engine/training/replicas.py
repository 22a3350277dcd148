"""The children of a training-operator job: one pod and one headless Service per replica index
(training-operator v1.9 ``common/pod.go``, ``common/service.go``, ``core/*.go``).

* Names: ``<job>-<lower rtype>-<index>`` (``/`` replaced by ``-``).
* Labels (:func:`job_labels`, kubeflow/common v0.4.1 ``GenLabels``): ``training.kubeflow.org/
  operator-name: <controller>``, ``training.kubeflow.org/job-name: <job>`` and the deprecated
  ``group-name: kubeflow.org`` and ``job-name: <job>``; a replica adds ``training.kubeflow.org/
  replica-type: <lower rtype>`` and ``training.kubeflow.org/replica-index: "<i>"``; the pod of
  the master role also ``training.kubeflow.org/job-role: master``.
* A pod (:func:`new_pod`) is the replica's template with those labels (over the template's),
  the kind's cluster spec (TF_CONFIG...), ``restartPolicy`` from the replica spec (``ExitCode``
  becomes ``Never``), gang decoration, and a controller reference to the job; of the template's
  metadata only labels, annotations and finalizers are kept.
* A Service (:func:`new_service`) is headless (``clusterIP: None``), selects the replica's
  labels, carries them, and exposes every port of the kind's default container
  (``{name, port}``; a later port of the same name replaces an earlier one).
* :func:`slices` buckets a replica type's pods (or Services) by their index label: ``max(highest
  index + 1, replicas)`` buckets; objects without a valid index are left out.
* :func:`container_port` finds a named port of the kind's container (what a kind's cluster
  spec names as a replica's address); :func:`master_role` is the common master-role rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mpi_controller.engine.training.api import (
    GROUP,
    GROUP_NAME_LABEL,
    JOB_NAME_LABEL,
    JOB_NAME_LABEL_DEPRECATED,
    JOB_ROLE_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    RESTART_EXIT_CODE,
    RESTART_NEVER,
    ReplicaSpec,
)
from mpi_controller.engine.training.gang import GangScheduler, decorate_pod_template
from mpi_controller.kube.jsonvalue import (
    Obj,
    as_dict,
    as_int,
    as_list,
    as_record,
    as_str,
    json_copy,
)

__all__ = [
    "by_type",
    "container_port",
    "general_name",
    "indexed_by_type",
    "indexed_slices",
    "job_labels",
    "master_role",
    "new_pod",
    "new_service",
    "replica_index",
    "replica_labels",
    "replica_selector",
    "service_ports",
    "slices",
]


ClusterSpec = Callable[[Obj, str, int], None]
"""``(template, rtype, index)``: add the kind's cluster environment to a pod template."""


def general_name(job_name: str, rtype: str, index: int | str) -> str:
    """``GenGeneralName``: ``<job>-<lower rtype>-<index>``, ``/`` replaced by ``-``."""
    return f"{job_name}-{rtype.lower()}-{index}".replace("/", "-")


def job_labels(job_name: str, controller_name: str) -> dict[str, str]:
    """The labels every child of the job carries (module doc)."""
    name = job_name.replace("/", "-")
    return {
        GROUP_NAME_LABEL: GROUP,
        JOB_NAME_LABEL_DEPRECATED: name,
        OPERATOR_NAME_LABEL: controller_name,
        JOB_NAME_LABEL: name,
    }


def replica_labels(job_name: str, controller_name: str, rtype: str, index: int) -> dict[str, str]:
    """:func:`job_labels` plus the replica's type (lower case) and index."""
    return {**job_labels(job_name, controller_name), REPLICA_TYPE_LABEL: rtype.lower(),
            REPLICA_INDEX_LABEL: str(index)}


def replica_selector(job_name: str, controller_name: str, rtype: str) -> str:
    """``metav1.FormatLabelSelector`` of the job's labels and the replica type (what
    ``status.replicaStatuses[*].selector`` holds for kinds with a scale subresource)."""
    labels = {**job_labels(job_name, controller_name), REPLICA_TYPE_LABEL: rtype.lower()}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``as_record(as_record(obj.get("metadata")).get("labels"))`` (read by name only)."""
    return as_record(as_record(obj.get("metadata")).get("labels"))


def _index(value: object) -> int | None:
    text = as_str(value)
    return int(text) if text.isascii() and text.isdigit() else None


def replica_index(obj: Mapping[str, Any]) -> int | None:
    """The ``replica-index`` label as a number (``None``: missing or not a number >= 0)."""
    return _index(_labels(obj).get(REPLICA_INDEX_LABEL))


def by_type(objs: Iterable[Obj], rtype: str) -> list[Obj]:
    """The objects whose ``replica-type`` label is ``rtype`` lower-cased."""
    rt = rtype.lower()
    return [o for o in objs if _labels(o).get(REPLICA_TYPE_LABEL) == rt]


def slices(objs: Iterable[Obj], replicas: int) -> list[list[Obj]]:
    """``GetPodSlices``/``GetServiceSlices`` (module doc)."""
    indexed = [(i, o) for o in objs if (i := replica_index(o)) is not None]
    return indexed_slices(indexed, replicas)


def indexed_by_type(objs: Iterable[Obj]) -> dict[str, list[tuple[int, Obj]]]:
    """One pass over ``objs``: each ``(index, object)`` with a valid index under its
    ``replica-type`` label, in input order. ``indexed_slices(indexed_by_type(objs).get(
    rtype.lower(), []), n)`` is ``slices(by_type(objs, rtype), n)``, each object's labels read
    once for all replica types."""
    out: dict[str, list[tuple[int, Obj]]] = {}
    for obj in objs:
        # _labels and _index inlined: this runs for every pod and Service of every sync.
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            continue
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            continue
        rtype, text = labels.get(REPLICA_TYPE_LABEL), labels.get(REPLICA_INDEX_LABEL)
        if isinstance(rtype, str) and isinstance(text, str) and text.isascii() \
                and text.isdigit():
            out.setdefault(rtype, []).append((int(text), obj))
    return out


def indexed_slices(indexed: Iterable[tuple[int, Obj]], replicas: int) -> list[list[Obj]]:
    """:func:`slices` of objects whose indexes are known."""
    indexed = list(indexed)
    size = max([replicas, *(i + 1 for i, _ in indexed)])
    out: list[list[Obj]] = [[] for _ in range(size)]
    for index, obj in indexed:
        out[index].append(obj)
    return out


def new_pod(job: Mapping[str, Any], spec: ReplicaSpec, index: int, *, controller_name: str,
            owner_ref: Mapping[str, Any], master_role: bool, cluster_spec: ClusterSpec,
            gang: GangScheduler | None) -> Obj:
    """Pod ``<job>-<rtype>-<index>`` (module doc)."""
    job_name = as_str(as_record(job.get("metadata")).get("name"))
    labels = replica_labels(job_name, controller_name, spec.rtype, index)
    if master_role:
        labels[JOB_ROLE_LABEL] = "master"
    template = json_copy(spec.template)
    template["metadata"] = meta = as_dict(template.get("metadata"))
    meta["labels"] = {**as_dict(meta.get("labels")), **labels}
    template["spec"] = pod_spec = as_dict(template.get("spec"))
    cluster_spec(template, spec.rtype, index)
    policy = spec.restart_policy
    pod_spec["restartPolicy"] = RESTART_NEVER if policy == RESTART_EXIT_CODE else policy
    if gang is not None:
        decorate_pod_template(template, job_name, spec.rtype.lower(), gang)
    namespace = as_str(as_record(job.get("metadata")).get("namespace"))
    metadata: Obj = {"name": general_name(job_name, spec.rtype, index), "namespace": namespace,
                     "labels": meta["labels"]}
    for key in ("annotations", "finalizers"):
        if meta.get(key):
            metadata[key] = meta[key]
    metadata["ownerReferences"] = [dict(owner_ref)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}


def container_port(spec: ReplicaSpec, container_name: str, port_name: str) -> int | None:
    """The ``containerPort`` of the port ``port_name`` of the container ``container_name``
    (``None``: no such container or port)."""
    for container in spec.containers:
        if container.get("name") != container_name:
            continue
        for port in as_list(container.get("ports")):
            number = as_int(as_record(port).get("containerPort"))
            if as_record(port).get("name") == port_name and number is not None:
                return number
    return None


def master_role(specs: Iterable[str], rtype: str, index: int, *,
                master_types: Iterable[str], worker_type: str = "Worker") -> bool:
    """``IsMasterRole``: the pods of the master types when the job has one of them, else
    worker 0."""
    masters = set(master_types)
    if any(t in masters for t in specs):
        return rtype in masters
    return rtype == worker_type and index == 0


def service_ports(spec: ReplicaSpec, container_name: str) -> list[Obj] | None:
    """``{name, port}`` of each port of the container ``container_name`` (``None`` when the
    template has no such container)."""
    for container in spec.containers:
        if container.get("name") == container_name:
            ports: dict[str, int] = {}
            for port in as_list(container.get("ports")):
                number = as_int(as_record(port).get("containerPort"))
                if number is not None:
                    ports[as_str(as_record(port).get("name"))] = number
            return [{"name": name, "port": number} for name, number in ports.items()]
    return None


def new_service(job: Mapping[str, Any], spec: ReplicaSpec, index: int, *, controller_name: str,
                owner_ref: Mapping[str, Any], ports: list[Obj]) -> Obj:
    """The headless Service ``<job>-<rtype>-<index>`` (module doc)."""
    job_name = as_str(as_record(job.get("metadata")).get("name"))
    labels = replica_labels(job_name, controller_name, spec.rtype, index)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": general_name(job_name, spec.rtype, index),
                     "namespace": as_str(as_record(job.get("metadata")).get("namespace")),
                     "labels": labels, "ownerReferences": [dict(owner_ref)]},
        "spec": {"clusterIP": "None", "selector": dict(labels), "ports": ports},
    }
