"""What training-operator v1.9 creates for a ``kubeflow.org/v1`` MPIJob (its kubectl-exec launch
mode, ``pkg/controller.v1/mpi``). Pure builders over the *defaulted* ``v1`` job dict.

* :func:`new_config_map`: ``<job>-config`` with ``hostfile`` (every desired worker),
  ``kubexec.sh`` and ``discover_hosts.sh`` (the Running workers) of
  :mod:`mpi_controller.mpi.kubexec`; a GPU launcher is in both.
* :func:`service_account_name`: the Launcher template's ``serviceAccountName``, else
  ``<job>-launcher``.
* :func:`new_worker`: pod ``<job>-worker-<i>``: the Worker template with its labels (the job's
  labels, ``replica-type: worker``, ``replica-index: <i>`` over the template's), annotations,
  ``restartPolicy`` from the replica spec (``ExitCode`` becomes ``Never``), ``sleep 365d`` when
  the first container has no command, ``kubexec.sh`` mounted, gang decoration.
* :func:`new_launcher`: pod ``<job>-launcher`` (labels ``replica-type: launcher`` and
  ``job-role: master``, no index), the ServiceAccount unless the template names one, the
  ``kubectl-delivery`` init container with ``image``, in its first container ``env`` of
  :func:`launcher_env` and the mounts, the restart policy from the replica spec, the volumes
  (``kubexec.sh``, ``hostfile``, ``discover_hosts.sh``).
* :func:`pod_events`: the Warning events upstream records when it builds a pod:
  ``SettedPodTemplateRestartPolicy`` (launcher template with a restart policy) and, with gang
  scheduling, ``SettedPodTemplateSchedulerName`` when a template names another scheduler.

The labels are the training-operator kinds' (:func:`~mpi_controller.engine.training.replicas.
job_labels`, operator name ``mpijob-controller``). Every object carries ``owner_ref``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from mpi_controller.engine.training.api import (
    JOB_ROLE_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    RESTART_EXIT_CODE,
    RESTART_NEVER,
    ReplicaSpec,
    replica_specs,
)
from mpi_controller.engine.training.gang import (
    GangScheduler,
    custom_scheduler_set,
    decorate_pod_template,
)
from mpi_controller.engine.training.replicas import job_labels
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_list, as_record, as_str, json_copy
from mpi_controller.mpi import constants, kubexec
from mpi_controller.mpi.v1.types import parse_mpi_job

__all__ = [
    "CONTROLLER_NAME",
    "DEFAULT_KUBECTL_DELIVERY_IMAGE",
    "EVENT_TEMPLATE_SCHEDULER_NAME",
    "SPECS_FIELD",
    "config_data",
    "launcher_env",
    "new_config_map",
    "new_launcher",
    "new_worker",
    "pod_events",
    "service_account_name",
    "specs_of",
    "worker_replicas",
]

CONTROLLER_NAME: Final = "mpijob-controller"
SPECS_FIELD: Final = "mpiReplicaSpecs"
DEFAULT_KUBECTL_DELIVERY_IMAGE: Final = "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest"
EVENT_TEMPLATE_SCHEDULER_NAME: Final = "SettedPodTemplateSchedulerName"
_SCHEDULER_NAME_MESSAGE = ("Another scheduler is specified when gang-scheduling is enabled and "
                           "it will not be overwritten")
_AGENT = f"{kubexec.CONFIG_MOUNT_PATH}/{kubexec.KUBEXEC}"
_INTEL_BOOTSTRAP, _INTEL_EXEC = "I_MPI_HYDRA_BOOTSTRAP", "I_MPI_HYDRA_BOOTSTRAP_EXEC"


def specs_of(job: Mapping[str, Any]) -> dict[str, ReplicaSpec]:
    """The job's replica specs (the engine's view)."""
    return replica_specs(job, SPECS_FIELD)


def worker_replicas(job: Mapping[str, Any]) -> int:
    """``Worker.replicas`` (0 without a Worker spec)."""
    spec = specs_of(job).get(constants.REPLICA_TYPE_WORKER)
    return spec.replicas if spec is not None else 0


def _launcher_template(job: Mapping[str, Any]) -> Obj:
    spec = specs_of(job).get(constants.REPLICA_TYPE_LAUNCHER)
    return spec.template if spec is not None else {}


def config_data(job: Mapping[str, Any], running_workers: Iterable[str]) -> dict[str, str]:
    """The ConfigMap's data (module doc); ``running_workers``: names of the Running ones."""
    name, _ = kubexec.job_name_namespace(job)
    view = parse_mpi_job(job)
    gpu = kubexec.is_gpu_launcher(_launcher_template(job))
    slots = view.spec.slots
    return {
        kubexec.HOSTFILE: kubexec.hostfile(name, worker_replicas(job), slots, gpu_launcher=gpu),
        kubexec.KUBEXEC: kubexec.kubexec_script(view.spec.main_container),
        kubexec.DISCOVER_HOSTS: kubexec.discover_hosts(name, running_workers, slots,
                                                       gpu_launcher=gpu),
    }


def new_config_map(job: Mapping[str, Any], running_workers: Iterable[str], *,
                   owner_ref: Mapping[str, Any]) -> Obj:
    name, namespace = kubexec.job_name_namespace(job)
    return kubexec.new_config_map(name, namespace, config_data(job, running_workers),
                             owner_ref=owner_ref)


def service_account_name(job: Mapping[str, Any]) -> str:
    """The launcher's ServiceAccount (module doc)."""
    named = as_str(as_record(_launcher_template(job).get("spec")).get("serviceAccountName"))
    return named or kubexec.launcher_name(kubexec.job_name_namespace(job)[0])


def _restart_policy(spec: ReplicaSpec) -> str:
    policy = spec.restart_policy
    return RESTART_NEVER if policy == RESTART_EXIT_CODE else policy


def _pod(job: Mapping[str, Any], spec: ReplicaSpec, pod_name: str, labels: Mapping[str, str],
         *, owner_ref: Mapping[str, Any], gang: GangScheduler | None,
         ) -> tuple[Obj, Obj]:
    """A pod from ``spec``'s template (a private copy, also returned for further changes):
    ``labels`` over the template's, the restart policy, gang decoration."""
    job_name, namespace = kubexec.job_name_namespace(job)
    template = json_copy(spec.template)
    template["metadata"] = meta = as_dict(template.get("metadata"))
    meta["labels"] = {**as_dict(meta.get("labels")), **labels}
    template["spec"] = pod_spec = as_dict(template.get("spec"))
    pod_spec["restartPolicy"] = _restart_policy(spec)
    if gang is not None:
        decorate_pod_template(template, job_name, labels[REPLICA_TYPE_LABEL], gang)
    metadata: Obj = {"name": pod_name, "namespace": namespace, "labels": meta["labels"]}
    if meta.get("annotations"):
        metadata["annotations"] = meta["annotations"]
    metadata["ownerReferences"] = [dict(owner_ref)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}, template


def new_worker(job: Mapping[str, Any], index: int, *, owner_ref: Mapping[str, Any],
               gang: GangScheduler | None = None) -> Obj:
    """Worker pod ``index`` (module doc)."""
    job_name, _ = kubexec.job_name_namespace(job)
    spec = specs_of(job)[constants.REPLICA_TYPE_WORKER]
    labels = {**job_labels(job_name, CONTROLLER_NAME), REPLICA_TYPE_LABEL: constants.ROLE_WORKER,
              REPLICA_INDEX_LABEL: str(index)}
    pod, template = _pod(job, spec, kubexec.worker_name(job_name, index), labels,
                         owner_ref=owner_ref, gang=gang)
    kubexec.add_worker_parts(template, job_name)
    return pod


def launcher_env(job: Mapping[str, Any]) -> list[Obj]:
    """What the launcher's first container gets appended (module doc): the Open MPI agent and
    hostfile; ``NVIDIA_*`` blanked unless the launcher asks for a GPU; Intel MPI's bootstrap
    (``rsh`` through ``kubexec.sh``) unless the container sets it."""
    containers = as_list(as_record(_launcher_template(job).get("spec")).get("containers"))
    own = {as_str(as_record(e).get("name"))
           for e in as_list(as_record(containers[0] if containers else {}).get("env"))}
    env = [{"name": "OMPI_MCA_plm_rsh_agent", "value": _AGENT},
           {"name": "OMPI_MCA_orte_default_hostfile",
            "value": f"{kubexec.CONFIG_MOUNT_PATH}/{kubexec.HOSTFILE}"}]
    if not kubexec.is_gpu_launcher(_launcher_template(job)):
        env += [{"name": "NVIDIA_VISIBLE_DEVICES", "value": ""},
                {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": ""}]
    if _INTEL_BOOTSTRAP not in own:
        env.append({"name": _INTEL_BOOTSTRAP, "value": "rsh"})
    if _INTEL_EXEC not in own:
        env.append({"name": _INTEL_EXEC, "value": _AGENT})
    return env


def new_launcher(job: Mapping[str, Any], *, image: str, owner_ref: Mapping[str, Any],
                 gang: GangScheduler | None = None) -> Obj:
    """The launcher pod (module doc)."""
    job_name, namespace = kubexec.job_name_namespace(job)
    spec = specs_of(job)[constants.REPLICA_TYPE_LAUNCHER]
    labels = {**job_labels(job_name, CONTROLLER_NAME), REPLICA_TYPE_LABEL: constants.ROLE_LAUNCHER,
              JOB_ROLE_LABEL: "master"}
    pod, template = _pod(job, spec, kubexec.launcher_name(job_name), labels, owner_ref=owner_ref,
                         gang=gang)
    pod_spec = template["spec"]
    if not as_str(pod_spec.get("serviceAccountName")):
        pod_spec["serviceAccountName"] = kubexec.launcher_name(job_name)
    kubexec.add_launcher_parts(template, job_name, namespace, image=image, env=launcher_env(job),
                          config_items=(kubexec.KUBEXEC, kubexec.HOSTFILE, kubexec.DISCOVER_HOSTS))
    return pod


def pod_events(job: Mapping[str, Any], rtype: str, gang: GangScheduler | None,
               ) -> list[Event]:
    """The Warning events of building a pod of ``rtype`` (module doc)."""
    specs = specs_of(job)
    events = []
    if gang is not None and custom_scheduler_set(specs, gang):
        events.append(Event(WARNING, EVENT_TEMPLATE_SCHEDULER_NAME, _SCHEDULER_NAME_MESSAGE))
    if rtype == constants.REPLICA_TYPE_LAUNCHER:
        events += kubexec.template_restart_policy_events(_launcher_template(job))
    return events
