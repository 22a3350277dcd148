"""The kubectl-exec launch mode shared by MPIJob ``v1`` (training-operator v1.9) and
``v1alpha2`` (mpi-operator v0.2.3): MPI reaches the workers through ``kubectl exec`` instead of
SSH. Pure builders of its pieces, with upstream's names and values:

* the ConfigMap data: ``hostfile`` (``<job>-worker-<i> slots=<n>`` per worker: bare pod names,
  exec goes through the API server), ``kubexec.sh`` (the ``OMPI_MCA_plm_rsh_agent``:
  ``/opt/kube/kubectl exec ${POD_NAME} [--container <mainContainer>] -- /bin/sh -c "$*"``, no
  trailing newline) and, for ``v1``, ``discover_hosts.sh`` (``echo <pod>:<slots>`` per Running
  worker, for elastic Horovod);
* the launcher's ServiceAccount, Role and RoleBinding ``<job>-launcher``: the Role lets it read
  pods and ``create`` ``pods/exec`` on its workers by name;
* the launcher's ``kubectl-delivery`` init container (copies kubectl to ``/opt/kube`` and waits
  for the workers; requests = limits = ``cpu 100m``, ``memory 512Mi``, ``ephemeral-storage
  5Gi``), its environment, mounts and volumes;
* a worker's first container: ``sleep 365d`` when it has no command, and ``kubexec.sh`` mounted
  at ``/etc/mpi`` (Open MPI checks for the agent's path on every rank).

Every object carries label ``app: <job>`` where upstream puts it and the controller reference
given by the caller. A Role for a job without workers gets no ``pods/exec`` rule (upstream's
rule would name no pod, which grants ``exec`` into every pod of the namespace).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_list, as_record, as_str, json_copy

__all__ = [
    "CONFIG_MOUNT_PATH",
    "CONFIG_VOLUME",
    "DISCOVER_HOSTS",
    "EVENT_TEMPLATE_RESTART_POLICY",
    "HOSTFILE",
    "KUBECTL_DELIVERY",
    "KUBECTL_MOUNT_PATH",
    "KUBECTL_VOLUME",
    "KUBEXEC",
    "LAUNCHER_SUFFIX",
    "WORKER_SUFFIX",
    "add_launcher_parts",
    "add_worker_parts",
    "config_map_name",
    "discover_hosts",
    "hostfile",
    "is_gpu_launcher",
    "job_name_namespace",
    "kubectl_delivery_container",
    "kubexec_script",
    "launcher_name",
    "new_config_map",
    "new_launcher_role",
    "new_launcher_role_binding",
    "new_launcher_service_account",
    "role_rules",
    "template_restart_policy_events",
    "worker_name",
]


CONFIG_SUFFIX: Final = "-config"
LAUNCHER_SUFFIX: Final = "-launcher"
WORKER_SUFFIX: Final = "-worker"
CONFIG_VOLUME: Final = "mpi-job-config"
CONFIG_MOUNT_PATH: Final = "/etc/mpi"
KUBEXEC: Final = "kubexec.sh"
HOSTFILE: Final = "hostfile"
DISCOVER_HOSTS: Final = "discover_hosts.sh"
KUBECTL_DELIVERY: Final = "kubectl-delivery"
KUBECTL_VOLUME: Final = "mpi-job-kubectl"
KUBECTL_MOUNT_PATH: Final = "/opt/kube"
SCRIPT_MODE: Final = 0o555
HOSTFILE_MODE: Final = 0o444
INIT_RESOURCES: Final = {"cpu": "100m", "memory": "512Mi", "ephemeral-storage": "5Gi"}
EVENT_TEMPLATE_RESTART_POLICY: Final = "SettedPodTemplateRestartPolicy"
_RESTART_POLICY_MESSAGE = ("Restart policy in pod template will be overwritten by restart "
                           "policy in replica spec")
_GPU_SUFFIX, _GPU_PATTERN = ".com/gpu", "gpu"


def job_name_namespace(job: Mapping[str, Any]) -> tuple[str, str]:
    """The job's ``metadata.name`` and ``metadata.namespace``."""
    meta = as_dict(job.get("metadata"))
    return as_str(meta.get("name")), as_str(meta.get("namespace"))


def launcher_name(job_name: str) -> str:
    """``<job>-launcher``: the launcher (pod or Job), its ServiceAccount, Role, RoleBinding."""
    return job_name + LAUNCHER_SUFFIX


def worker_name(job_name: str, index: int) -> str:
    """``<job>-worker-<index>``: a worker pod."""
    return f"{job_name}{WORKER_SUFFIX}-{index}"


def config_map_name(job_name: str) -> str:
    return job_name + CONFIG_SUFFIX


# -- the ConfigMap -----------------------------------------------------------------------------


def kubexec_script(main_container: str = "") -> str:
    """``kubexec.sh`` (module doc)."""
    container = f" --container {main_container}" if main_container else ""
    return ("#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n"
            f'{KUBECTL_MOUNT_PATH}/kubectl exec ${{POD_NAME}}{container} -- /bin/sh -c "$*"')


def hostfile(job_name: str, workers: int, slots: int, *, gpu_launcher: bool = False) -> str:
    """One ``<pod> slots=<n>`` line per desired worker; a GPU launcher is listed first."""
    lines = [f"{launcher_name(job_name)} slots={slots}\n"] if gpu_launcher else []
    lines += [f"{worker_name(job_name, i)} slots={slots}\n" for i in range(workers)]
    return "".join(lines)


def discover_hosts(job_name: str, running_workers: Iterable[str], slots: int, *,
                   gpu_launcher: bool = False) -> str:
    """``#!/bin/sh`` then ``echo <pod>:<slots>`` per Running worker, sorted by name (a GPU
    launcher first, followed by an empty line, as upstream writes it); no trailing newline."""
    script = "#!/bin/sh"
    if gpu_launcher:
        script += f"\necho {launcher_name(job_name)}:{slots}\n"
    for pod in sorted(running_workers):
        script += f"\necho {pod}:{slots}"
    return script


def is_gpu_launcher(launcher_template: Mapping[str, Any]) -> bool:
    """A launcher container's limits name a resource ending in ``.com/gpu`` or containing
    ``gpu`` (training-operator's ``isGPULauncher``)."""
    for container in as_list(as_record(launcher_template.get("spec")).get("containers")):
        limits = as_dict(as_record(as_record(container).get("resources")).get("limits"))
        if any(k.endswith(_GPU_SUFFIX) or _GPU_PATTERN in k for k in limits):
            return True
    return False


def _meta(name: str, namespace: str, job_name: str, owner_ref: Mapping[str, Any]) -> Obj:
    return {"name": name, "namespace": namespace, "labels": {"app": job_name},
            "ownerReferences": [dict(owner_ref)]}


def new_config_map(job_name: str, namespace: str, data: Mapping[str, str], *,
                   owner_ref: Mapping[str, Any]) -> Obj:
    """ConfigMap ``<job>-config`` with ``data``."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": _meta(config_map_name(job_name), namespace, job_name, owner_ref),
            "data": dict(data)}


# -- the launcher's identity -------------------------------------------------------------------


def new_launcher_service_account(job_name: str, namespace: str, *, owner_ref: Mapping[str, Any],
                                 name: str = "") -> Obj:
    """ServiceAccount ``name`` (default ``<job>-launcher``)."""
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": _meta(name or launcher_name(job_name), namespace, job_name, owner_ref)}


def role_rules(job_name: str, workers: int) -> list[Obj]:
    """Read pods; ``create`` ``pods/exec`` on the workers by name (none without workers)."""
    rules: list[Obj] = [{"verbs": ["get", "list", "watch"], "apiGroups": [""],
                         "resources": ["pods"]}]
    if workers > 0:
        rules.append({"verbs": ["create"], "apiGroups": [""], "resources": ["pods/exec"],
                      "resourceNames": [worker_name(job_name, i) for i in range(workers)]})
    return rules


def new_launcher_role(job_name: str, namespace: str, workers: int, *,
                      owner_ref: Mapping[str, Any]) -> Obj:
    """Role ``<job>-launcher`` with :func:`role_rules`."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": _meta(launcher_name(job_name), namespace, job_name, owner_ref),
            "rules": role_rules(job_name, workers)}


def new_launcher_role_binding(job_name: str, namespace: str, *, owner_ref: Mapping[str, Any],
                              service_account: str = "") -> Obj:
    """RoleBinding ``<job>-launcher``: the launcher's ServiceAccount to its Role."""
    name = launcher_name(job_name)
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": _meta(name, namespace, job_name, owner_ref),
            "subjects": [{"kind": "ServiceAccount", "name": service_account or name,
                          "namespace": namespace}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}}


# -- pod templates -----------------------------------------------------------------------------


def kubectl_delivery_container(image: str, namespace: str) -> Obj:
    """The launcher's init container (module doc)."""
    return {
        "name": KUBECTL_DELIVERY, "image": image, "imagePullPolicy": "IfNotPresent",
        "env": [{"name": "TARGET_DIR", "value": KUBECTL_MOUNT_PATH},
                {"name": "NAMESPACE", "value": namespace}],
        "volumeMounts": [{"name": KUBECTL_VOLUME, "mountPath": KUBECTL_MOUNT_PATH},
                         {"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT_PATH}],
        "resources": {"limits": dict(INIT_RESOURCES), "requests": dict(INIT_RESOURCES)},
    }


def _config_volume(job_name: str, items: Iterable[tuple[str, int]]) -> Obj:
    return {"name": CONFIG_VOLUME, "configMap": {
        "name": config_map_name(job_name),
        "items": [{"key": key, "path": key, "mode": mode} for key, mode in items]}}


def _first_container(pod_spec: Obj) -> Obj | None:
    containers = pod_spec.get("containers")
    if isinstance(containers, list) and containers and isinstance(containers[0], dict):
        first: Obj = containers[0]
        return first
    return None


def _append(obj: Obj, key: str, items: list[Obj]) -> None:
    obj[key] = [*as_list(obj.get(key)), *items]


def add_worker_parts(template: Obj, job_name: str) -> None:
    """A worker's pod template (a private copy, changed in place): the first container gets
    ``sleep 365d`` when it has no command, and ``kubexec.sh`` at ``/etc/mpi``."""
    spec = template.setdefault("spec", {})
    container = _first_container(spec)
    if container is not None:
        if not as_list(container.get("command")):
            container["command"] = ["sleep"]
            container["args"] = ["365d"]
        _append(container, "volumeMounts", [{"name": CONFIG_VOLUME,
                                             "mountPath": CONFIG_MOUNT_PATH}])
    _append(spec, "volumes", [_config_volume(job_name, [(KUBEXEC, SCRIPT_MODE)])])


def add_launcher_parts(template: Obj, job_name: str, namespace: str, *, image: str,
                       env: list[Obj], config_items: Iterable[str]) -> None:
    """A launcher's pod template (a private copy, changed in place): the ``kubectl-delivery``
    init container appended, ``env`` and the two mounts appended to the first container, the
    kubectl volume and the ConfigMap volume (``config_items``: keys, ``hostfile`` read-only,
    scripts executable) appended."""
    spec = template.setdefault("spec", {})
    _append(spec, "initContainers", [kubectl_delivery_container(image, namespace)])
    container = _first_container(spec)
    if container is not None:
        _append(container, "env", json_copy(env))
        _append(container, "volumeMounts", [
            {"name": KUBECTL_VOLUME, "mountPath": KUBECTL_MOUNT_PATH},
            {"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT_PATH}])
    items = [(k, HOSTFILE_MODE if k == HOSTFILE else SCRIPT_MODE) for k in config_items]
    _append(spec, "volumes", [{"name": KUBECTL_VOLUME, "emptyDir": {}},
                              _config_volume(job_name, items)])


def template_restart_policy_events(template: Mapping[str, Any]) -> list[Event]:
    """``SettedPodTemplateRestartPolicy`` when the launcher's template sets a restart policy
    (the replica spec's wins)."""
    if as_str(as_record(template.get("spec")).get("restartPolicy")):
        return [Event(WARNING, EVENT_TEMPLATE_RESTART_POLICY, _RESTART_POLICY_MESSAGE)]
    return []
