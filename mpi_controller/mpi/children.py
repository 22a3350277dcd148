"""What the first sync of an MPIJob creates (pure): :func:`initial_children`, the kind's public
builder, in the order declared once here (:data:`CREATION_ORDER`).

The MPIJob kind's sync (mpi-operator v0.8.2 ``pkg/controller/mpi_job_controller.go``,
``syncHandler``) creates the Service, ConfigMap and SSH Secret (concurrently), then the
PodGroup (with gang scheduling), the worker pods and the launcher Job; ``mpi-controller
render`` prints :func:`initial_children`, in this order. A test runs the sync against the
in-memory API and checks that its creates follow :data:`CREATION_ORDER`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.owners import require_identity
from mpi_controller.mpi.configmap import desired_config_map
from mpi_controller.mpi.gang import new_pod_group
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.secret import new_ssh_auth_secret
from mpi_controller.mpi.service import new_job_service
from mpi_controller.mpi.v2beta1 import parse_mpi_job
from mpi_controller.mpi.worker import new_worker

__all__ = ["CREATION_ORDER", "in_creation_order", "initial_children"]

CREATION_ORDER = ("Service", "ConfigMap", "Secret", "PodGroup", "Pod", "Job")
"""Object kinds in the order a first sync creates them."""


def in_creation_order(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``objects`` sorted by :data:`CREATION_ORDER` of their ``kind`` (stable within a kind)."""
    return sorted(objects, key=lambda obj: CREATION_ORDER.index(obj.get("kind", "Job")))


def _running_workers(job: Mapping[str, Any], count: int) -> list[Obj]:
    pods = [new_worker(job, i) for i in range(min(count, parse_mpi_job(job).worker_replicas))]
    for pod in pods:
        pod["status"] = {"phase": "Running"}
    return pods


def initial_children(job: Mapping[str, Any], *, cluster_domain: str = "",
                     gang_scheduling: str = "",
                     priority_classes: Mapping[str, int] | None = None,
                     running_workers: int = 0) -> list[Obj]:
    """The objects the first sync of the defaulted, valid ``v2beta1`` MPIJob ``job`` creates,
    in :data:`CREATION_ORDER`, as plain dicts ready to send: the Service, the ConfigMap
    (hostfile and ``discover_hosts.sh``, host names with ``cluster_domain``), the SSH Secret
    (a fresh key pair), the PodGroup (with ``gang_scheduling``: ``volcano`` or a
    scheduler-plugins scheduler's name; ``priority_classes``, PriorityClass values by name,
    size its minResources), the worker pods and the launcher Job. A suspended job gets no
    PodGroup and no workers, and a suspended launcher. ``running_workers`` counts the first
    workers ``discover_hosts.sh`` lists as Running (a first sync sees none). ValueError naming
    ``metadata.namespace`` or ``metadata.uid`` when the job lacks one."""
    require_identity(job)
    view = parse_mpi_job(job)
    objects: list[Obj] = [
        new_job_service(job),
        desired_config_map(job, _running_workers(job, running_workers),
                           cluster_domain=cluster_domain),
        new_ssh_auth_secret(job),
    ]
    if not view.suspended:
        pod_group = new_pod_group(job, gang_scheduling=gang_scheduling,
                                  priority_classes=dict(priority_classes or {}))
        if pod_group is not None:
            objects.append(pod_group)
        if view.spec.worker is not None:
            objects += [new_worker(job, i, gang_scheduling=gang_scheduling)
                        for i in range(view.worker_replicas)]
    objects.append(new_launcher_job(job, gang_scheduling=gang_scheduling))
    return in_creation_order(objects)
