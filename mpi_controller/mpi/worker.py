"""Worker pods ``<job>-worker-<i>`` (upstream ``newWorker``).

From a deep copy of the Worker pod template: the default labels plus
``replica-index: "<i>"`` (``"<i+1>"`` with runLauncherAsWorker, so the launcher holds 0),
``hostname``/``subdomain``, ``ClusterFirstWithHostNet`` for hostNetwork pods, the DNS search
``<job>.<ns>.svc.cluster.local`` (hard-coded ``cluster.local``, as upstream), the replica's
restart policy, ``/usr/sbin/sshd -De`` as container[0]'s command when it has neither command
nor args, ``K_MPI_JOB_ROLE=worker``, the SSH volume and mount, and gang decoration. With the
SSH readiness opt-in (:mod:`~mpi_controller.mpi.features`), container[0] gets a TCP readiness
probe on the sshd port unless it has a readiness probe of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_list
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.features import ssh_readiness_port
from mpi_controller.mpi.gang import decorate_pod_template
from mpi_controller.mpi.podtemplate import (
    append_env,
    copy_template,
    first_container,
    set_restart_policy,
    setup_ssh_on_pod,
)
from mpi_controller.mpi.v2beta1.types import MPIJob, parse_mpi_job

__all__ = ["SSHD_COMMAND", "new_worker", "ssh_readiness_probe", "worker_replica_index_label"]

SSHD_COMMAND = ["/usr/sbin/sshd", "-De"]


def ssh_readiness_probe(port: int) -> dict[str, Any]:
    """The readiness probe of the SSH readiness opt-in: a TCP connect to sshd's ``port``, every
    second from the container's start (Ready about a second after sshd listens)."""
    return {"tcpSocket": {"port": port}, "periodSeconds": 1}


def worker_replica_index_label(job: MPIJob, index: int) -> str:
    """The replica-index label value of worker ``index``."""
    return str(index + 1 if job.run_launcher_as_worker else index)


def _add_dns_search(spec: dict[str, Any], search: str) -> None:
    config = spec.get("dnsConfig")
    if not isinstance(config, dict):
        spec["dnsConfig"] = {"searches": [search]}
        return
    config["searches"] = [*as_list(config.get("searches")), search]


def new_worker(job: Mapping[str, Any], index: int, *, gang_scheduling: str = "") -> dict[str, Any]:
    """The worker pod ``index`` of ``job`` (a defaulted MPIJob dict)."""
    view = parse_mpi_job(job)
    worker = view.spec.worker
    name = naming.worker_name(view.name, index)
    template = copy_template(worker.template if worker is not None else {})
    labels = template["metadata"]["labels"]
    labels.update(naming.default_labels(view.name, constants.ROLE_WORKER))
    labels[constants.REPLICA_INDEX_LABEL] = worker_replica_index_label(view, index)
    spec = template["spec"]
    spec["hostname"] = name
    spec["subdomain"] = view.name
    if spec.get("hostNetwork") is True:
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    _add_dns_search(spec, f"{view.name}.{view.namespace}.svc.cluster.local")
    set_restart_policy(spec, worker)
    container = first_container(spec)
    if container is not None:
        if not container.get("command") and not container.get("args"):
            container["command"] = list(SSHD_COMMAND)
        append_env(container, [{"name": "K_MPI_JOB_ROLE", "value": constants.ROLE_WORKER}])
        port = ssh_readiness_port(job)
        if port is not None and "readinessProbe" not in container:
            container["readinessProbe"] = ssh_readiness_probe(port)
    setup_ssh_on_pod(spec, view)
    decorate_pod_template(template, view.name, gang_scheduling)
    return _pod(job, view, name, template)


def _pod(
    job: Mapping[str, Any], view: MPIJob, name: str, template: dict[str, Any]
) -> dict[str, Any]:
    meta = template["metadata"]
    metadata: dict[str, Any] = {"name": name, "namespace": view.namespace, "labels": meta["labels"]}
    annotations = as_dict(meta.get("annotations"))
    if annotations:
        metadata["annotations"] = annotations
    metadata["ownerReferences"] = [naming.controller_ref(job)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
