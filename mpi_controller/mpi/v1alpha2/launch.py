"""What mpi-operator v0.2.3 creates for a ``kubeflow.org/v1alpha2`` MPIJob
(``pkg/controllers/v1alpha2``): the kubectl-exec launch mode of
:mod:`mpi_controller.mpi.kubexec` with a worker StatefulSet and a launcher batch Job. Pure
builders over the *defaulted* ``v1alpha2`` job dict.

* :func:`new_config_map`: ``<job>-config`` with ``hostfile`` and ``kubexec.sh`` (no
  ``discover_hosts.sh``); created once, never updated.
* :func:`new_worker_set`: StatefulSet ``<job>-worker``: labels and selector ``group_name:
  kubeflow.org``, ``mpi_job_name: <job>``, ``mpi_role_type: worker`` (also on the pods, over
  the template's), ``podManagementPolicy: Parallel``, ``serviceName: <job>-worker`` (no Service
  is made), the pods' ``restartPolicy: Always`` (the replica spec's is ignored), ``sleep
  365d`` when the first container has no command, ``kubexec.sh`` mounted.
* :func:`new_launcher_job`: batch Job ``<job>-launcher``: labels ``mpi_role_type: launcher``
  (and the two others; on the pod too), ``backoffLimit`` and ``activeDeadlineSeconds`` (those
  of ``runPolicy`` when set there), the pod running as ServiceAccount ``<job>-launcher`` (always;
  a template's is replaced) with the ``kubectl-delivery`` init container (``image``), in its
  first container ``OMPI_MCA_plm_rsh_agent``, ``OMPI_MCA_orte_default_hostfile`` and the blank
  ``NVIDIA_VISIBLE_DEVICES``/``NVIDIA_DRIVER_CAPABILITIES``, the restart policy of the replica
  spec, the volumes (``kubexec.sh``, ``hostfile``).

The ServiceAccount, Role and RoleBinding are :mod:`~mpi_controller.mpi.kubexec`'s. Every
object carries ``owner_ref``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mpi_controller.kube.jsonvalue import Obj, as_dict, as_record, json_copy
from mpi_controller.mpi import constants, kubexec
from mpi_controller.mpi.v1alpha2.types import parse_mpi_job

__all__ = [
    "DEFAULT_KUBECTL_DELIVERY_IMAGE",
    "GROUP_NAME_LABEL",
    "JOB_NAME_LABEL",
    "ROLE_LABEL",
    "labels",
    "new_config_map",
    "new_launcher_job",
    "new_worker_set",
    "worker_set_name",
]

DEFAULT_KUBECTL_DELIVERY_IMAGE: Final = "mpioperator/kubectl-delivery:latest"
"""The image upstream's Deployment passes as ``--kubectl-delivery-image``."""
GROUP_NAME_LABEL: Final = "group_name"
JOB_NAME_LABEL: Final = "mpi_job_name"
ROLE_LABEL: Final = "mpi_role_type"
_AGENT = f"{kubexec.CONFIG_MOUNT_PATH}/{kubexec.KUBEXEC}"


def labels(job_name: str, role: str) -> dict[str, str]:
    """``group_name``, ``mpi_job_name``, ``mpi_role_type``."""
    return {GROUP_NAME_LABEL: constants.GROUP, JOB_NAME_LABEL: job_name, ROLE_LABEL: role}


def worker_set_name(job_name: str) -> str:
    return job_name + kubexec.WORKER_SUFFIX


def _replica(job: Mapping[str, Any], rtype: str) -> Obj:
    specs = as_dict(as_record(job.get("spec")).get("mpiReplicaSpecs"))
    return as_dict(specs.get(rtype))


def new_config_map(job: Mapping[str, Any], workers: int, *,
                   owner_ref: Mapping[str, Any]) -> Obj:
    name, namespace = kubexec.job_name_namespace(job)
    spec = parse_mpi_job(job).spec
    return kubexec.new_config_map(name, namespace, {
        kubexec.HOSTFILE: kubexec.hostfile(name, workers, spec.slots),
        kubexec.KUBEXEC: kubexec.kubexec_script(spec.main_container)}, owner_ref=owner_ref)


def _template(job: Mapping[str, Any], rtype: str, role: str) -> Obj:
    """The replica's pod template (a copy) with the labels."""
    name, _ = kubexec.job_name_namespace(job)
    template = json_copy(as_dict(_replica(job, rtype).get("template")))
    template["metadata"] = meta = as_dict(template.get("metadata"))
    meta["labels"] = {**as_dict(meta.get("labels")), **labels(name, role)}
    template["spec"] = as_dict(template.get("spec"))
    return template


def _meta(name: str, namespace: str, obj_labels: Mapping[str, str],
          owner_ref: Mapping[str, Any]) -> Obj:
    return {"name": name, "namespace": namespace, "labels": dict(obj_labels),
            "ownerReferences": [dict(owner_ref)]}


def new_worker_set(job: Mapping[str, Any], replicas: int, *, owner_ref: Mapping[str, Any],
                   ) -> Obj:
    """The worker StatefulSet with ``replicas`` (module doc)."""
    name, namespace = kubexec.job_name_namespace(job)
    template = _template(job, constants.REPLICA_TYPE_WORKER, constants.ROLE_WORKER)
    template["spec"]["restartPolicy"] = "Always"
    kubexec.add_worker_parts(template, name)
    own = labels(name, constants.ROLE_WORKER)
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": _meta(worker_set_name(name), namespace, own, owner_ref),
        "spec": {"podManagementPolicy": "Parallel", "replicas": replicas,
                 "selector": {"matchLabels": dict(own)},
                 "serviceName": worker_set_name(name), "template": template},
    }


def new_launcher_job(job: Mapping[str, Any], *, image: str, owner_ref: Mapping[str, Any],
                     ) -> Obj:
    """The launcher batch Job (module doc)."""
    name, namespace = kubexec.job_name_namespace(job)
    spec = parse_mpi_job(job).spec
    template = _template(job, constants.REPLICA_TYPE_LAUNCHER, constants.ROLE_LAUNCHER)
    pod_spec = template["spec"]
    pod_spec["serviceAccountName"] = kubexec.launcher_name(name)
    env = [{"name": "OMPI_MCA_plm_rsh_agent", "value": _AGENT},
           {"name": "OMPI_MCA_orte_default_hostfile",
            "value": f"{kubexec.CONFIG_MOUNT_PATH}/{kubexec.HOSTFILE}"},
           {"name": "NVIDIA_VISIBLE_DEVICES", "value": ""},
           {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": ""}]
    kubexec.add_launcher_parts(template, name, namespace, image=image, env=env,
                          config_items=(kubexec.KUBEXEC, kubexec.HOSTFILE))
    launcher = spec.replica(constants.REPLICA_TYPE_LAUNCHER)
    pod_spec["restartPolicy"] = launcher.restart_policy if launcher is not None else ""
    job_spec: Obj = {"template": template}
    if spec.effective_backoff_limit is not None:
        job_spec["backoffLimit"] = spec.effective_backoff_limit
    if spec.effective_active_deadline_seconds is not None:
        job_spec["activeDeadlineSeconds"] = spec.effective_active_deadline_seconds
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": _meta(kubexec.launcher_name(name), namespace,
                              labels(name, constants.ROLE_LAUNCHER), owner_ref),
            "spec": job_spec}
