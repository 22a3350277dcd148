"""The ConfigMap ``<job>-config``: ``hostfile`` and ``discover_hosts.sh``.

hostfile (upstream ``newConfigMap``): one line per host, each ending in ``\\n``; first the
launcher when ``runLauncherAsWorker``, then ``<job>-worker-0 .. R-1`` (R = Worker replicas).
OpenMPI lines are ``<fqdn> slots=<n>``; Intel and MPICH lines are ``<fqdn>:<n>``; any other
implementation gives no lines.

discover_hosts.sh (upstream ``updateDiscoverHostsInConfigMap``): ``#!/bin/sh\\n``, then
``echo <launcher fqdn>`` when ``runLauncherAsWorker``, then ``echo <pod fqdn>`` for each worker
pod (matching the worker selector, phase Running) sorted by name as plain strings. With the
SSH readiness opt-in (:mod:`~mpi_controller.mpi.features`) only Ready workers are listed.

The ConfigMap is updated whenever its ``data`` differs from the desired one; a change that
only adds hosts to ``discover_hosts.sh`` (:func:`only_hosts_added`) may wait while other
workers are still starting (:func:`~mpi_controller.mpi.decisions.hosts_hold`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_record, as_str, json_copy
from mpi_controller.kube.pods import is_pod_ready, pod_phase
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.features import ssh_readiness_port
from mpi_controller.mpi.v2beta1.types import MPIJob, parse_mpi_job

__all__ = [
    "config_map_needs_update",
    "desired_config_map",
    "discover_hosts_script",
    "hostfile",
    "new_config_map",
    "only_hosts_added",
    "running_worker_pods",
    "update_config_map",
    "update_discover_hosts_in_config_map",
]


def _host_line(view: MPIJob, host: str, cluster_domain: str) -> str:
    fqdn = naming.host_fqdn(host, view.name, view.namespace, cluster_domain)
    slots = view.spec.slots_per_worker
    slots = 1 if slots is None else slots
    impl = view.spec.mpi_implementation
    if impl == constants.MPI_IMPLEMENTATION_OPENMPI:
        return f"{fqdn} slots={slots}\n"
    if impl in (constants.MPI_IMPLEMENTATION_INTEL, constants.MPI_IMPLEMENTATION_MPICH):
        return f"{fqdn}:{slots}\n"
    return ""


def hostfile(
    job: Mapping[str, Any], worker_replicas: int | None = None, *, cluster_domain: str = ""
) -> str:
    """The hostfile text; ``worker_replicas`` defaults to the Worker spec's replicas."""
    view = parse_mpi_job(job)
    count = view.worker_replicas if worker_replicas is None else worker_replicas
    hosts = [naming.launcher_name(view.name)] if view.run_launcher_as_worker else []
    hosts += [naming.worker_name(view.name, i) for i in range(max(count, 0))]
    return "".join(_host_line(view, host, cluster_domain) for host in hosts)


def running_worker_pods(
    job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The pods of ``pods`` that match ``job``'s worker selector and are in phase Running
    (and Ready, when the job opts in to SSH readiness: a Running worker whose sshd does not
    accept connections yet is no host to add)."""
    need_ready = ssh_readiness_port(job) is not None
    return [pod for pod in naming.worker_pods(job, pods)
            if pod_phase(pod) == "Running" and (not need_ready or is_pod_ready(pod))]


def discover_hosts_script(
    job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], *, cluster_domain: str = ""
) -> str:
    """The discover_hosts.sh text from ``pods`` (filtered with :func:`running_worker_pods`)."""
    view = parse_mpi_job(job)
    lines = ["#!/bin/sh\n"]
    if view.run_launcher_as_worker:
        launcher = naming.host_fqdn(
            naming.launcher_name(view.name), view.name, view.namespace, cluster_domain
        )
        lines.append(f"echo {launcher}\n")
    running = running_worker_pods(job, pods)
    for pod in sorted(running, key=_pod_name):
        meta = as_dict(pod.get("metadata"))
        fqdn = naming.host_fqdn(
            _pod_name(pod), view.name, as_str(meta.get("namespace")), cluster_domain
        )
        lines.append(f"echo {fqdn}\n")
    return "".join(lines)


def _pod_name(pod: Mapping[str, Any]) -> str:
    return as_str(as_record(pod.get("metadata")).get("name"))


def new_config_map(
    job: Mapping[str, Any], worker_replicas: int | None = None, *, cluster_domain: str = ""
) -> dict[str, Any]:
    """The ConfigMap with only ``hostfile`` (upstream ``newConfigMap``)."""
    view = parse_mpi_job(job)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": naming.config_map_name(view.name),
            "namespace": view.namespace,
            "labels": {"app": view.name},
            "ownerReferences": [naming.controller_ref(job)],
        },
        "data": {
            naming.HOSTFILE_NAME: hostfile(job, worker_replicas, cluster_domain=cluster_domain)
        },
    }


def update_discover_hosts_in_config_map(
    config_map: Mapping[str, Any],
    job: Mapping[str, Any],
    pods: Iterable[Mapping[str, Any]],
    *,
    cluster_domain: str = "",
) -> dict[str, Any]:
    """A copy of ``config_map`` whose ``discover_hosts.sh`` lists ``pods`` that are Running."""
    out = json_copy(dict(config_map))
    data = out["data"] = dict(as_dict(out.get("data")))
    data[naming.DISCOVER_HOSTS_SCRIPT_NAME] = discover_hosts_script(
        job, pods, cluster_domain=cluster_domain
    )
    return out


def desired_config_map(
    job: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], *, cluster_domain: str = ""
) -> dict[str, Any]:
    """The full desired ConfigMap: hostfile plus discover_hosts.sh from ``pods`` (what
    :func:`update_discover_hosts_in_config_map` makes of :func:`new_config_map`, built in
    place: the new ConfigMap is nobody else's)."""
    out = new_config_map(job, cluster_domain=cluster_domain)
    out["data"][naming.DISCOVER_HOSTS_SCRIPT_NAME] = discover_hosts_script(
        job, pods, cluster_domain=cluster_domain
    )
    return out


def config_map_needs_update(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """True if ``existing``'s ``data`` differs from ``desired``'s (nil and empty are equal)."""
    return (existing.get("data") or {}) != (desired.get("data") or {})


def update_config_map(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``existing`` with ``data`` replaced by ``desired``'s."""
    out = json_copy(dict(existing))
    out["data"] = json_copy(desired.get("data"))
    return out


def only_hosts_added(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """``desired``'s ``data`` is ``existing``'s but for ``discover_hosts.sh`` lines added, none
    taken away (what a worker's start changes; the hostfile and every other key equal)."""
    old, new = as_dict(existing.get("data")), as_dict(desired.get("data"))
    key = naming.DISCOVER_HOSTS_SCRIPT_NAME
    before, after = old.get(key), new.get(key)
    if before == after or not isinstance(before, str) or not isinstance(after, str):
        return False
    if {k: v for k, v in old.items() if k != key} != {k: v for k, v in new.items() if k != key}:
        return False
    return set(before.splitlines()) <= set(after.splitlines())
