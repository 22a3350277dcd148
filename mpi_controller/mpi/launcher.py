"""The launcher ``batch/v1`` Job ``<job>-launcher`` (upstream ``newLauncherJob`` and
``newLauncherPodTemplate``), and the updates it gets on suspend and resume.

Pod template, from a deep copy of the Launcher template: default labels (role launcher), gang
decoration, ``replica-index: "0"`` with runLauncherAsWorker, ``hostname``/``subdomain``,
``ClusterFirstWithHostNet`` for hostNetwork, container[0] env ``K_MPI_JOB_ROLE=launcher`` then
the implementation's variables (OpenMPI: keep-FQDN, hostfile, rsh args, slots; Intel: hostfile,
bootstrap args, ``I_MPI_PERHOST``; MPICH: hostfile, launch args), then — unless
runLauncherAsWorker — empty ``NVIDIA_VISIBLE_DEVICES`` and ``NVIDIA_DRIVER_CAPABILITIES``; the
SSH volume and mount; the replica's restart policy; the ``mpi-job-config`` volume mounted at
``/etc/mpi``. The template carries the controller reference too.

Job spec: ``ttlSecondsAfterFinished``, ``activeDeadlineSeconds`` and ``backoffLimit`` from the
run policy (omitted when unset; no TTL when the job opts in to ``mpi-controller.io/ttl-deletes:
MPIJob``), ``podReplacementPolicy: Failed``, and ``suspend: true`` only when the MPIJob is
suspended.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_record, json_copy
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.events import Event
from mpi_controller.mpi.features import ttl_deletes_mpijob
from mpi_controller.mpi.gang import decorate_pod_template
from mpi_controller.mpi.podtemplate import (
    append_env,
    copy_template,
    first_container,
    set_restart_policy,
    setup_ssh_on_pod,
)
from mpi_controller.mpi.v2beta1.types import MPIJob, parse_mpi_job

__all__ = [
    "RESTART_POLICY_OVERRIDDEN_MESSAGE",
    "clear_launcher_start_time",
    "launcher_env",
    "launcher_template_events",
    "new_launcher_job",
    "new_launcher_pod_template",
    "resume_launcher",
    "suspend_launcher",
    "sync_launcher_scheduling_directives",
]

RESTART_POLICY_OVERRIDDEN_MESSAGE = (
    "Restart policy in pod template overridden by restart policy in replica spec"
)
_HOSTFILE_PATH = f"{naming.CONFIG_MOUNT_PATH}/{naming.HOSTFILE_NAME}"
_SSH_ARGS = "-o ConnectionAttempts=10"


def _env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def launcher_env(job: MPIJob) -> list[dict[str, Any]]:
    """The env entries appended to the launcher's container[0], in upstream's order."""
    slots = str(job.spec.slots_per_worker if job.spec.slots_per_worker is not None else 1)
    env = [_env("K_MPI_JOB_ROLE", constants.ROLE_LAUNCHER)]
    impl = job.spec.mpi_implementation
    if impl == constants.MPI_IMPLEMENTATION_OPENMPI:
        env += [
            _env("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
            _env("OMPI_MCA_orte_default_hostfile", _HOSTFILE_PATH),
            _env("OMPI_MCA_plm_rsh_args", _SSH_ARGS),
            _env("OMPI_MCA_orte_set_default_slots", slots),
        ]
    elif impl == constants.MPI_IMPLEMENTATION_INTEL:
        env += [
            _env("I_MPI_HYDRA_HOST_FILE", _HOSTFILE_PATH),
            _env("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", _SSH_ARGS),
            _env("I_MPI_PERHOST", slots),
        ]
    elif impl == constants.MPI_IMPLEMENTATION_MPICH:
        env += [_env("HYDRA_HOST_FILE", _HOSTFILE_PATH), _env("HYDRA_LAUNCH_EXTRA_ARGS", _SSH_ARGS)]
    if not job.run_launcher_as_worker:
        env += [{"name": "NVIDIA_VISIBLE_DEVICES"}, {"name": "NVIDIA_DRIVER_CAPABILITIES"}]
    return env


def _config_volume(job: MPIJob) -> dict[str, Any]:
    items = [
        {"key": naming.HOSTFILE_NAME, "path": naming.HOSTFILE_NAME, "mode": 0o444},
        {"key": naming.DISCOVER_HOSTS_SCRIPT_NAME, "path": naming.DISCOVER_HOSTS_SCRIPT_NAME,
         "mode": 0o555},
    ]
    return {
        "name": naming.CONFIG_VOLUME_NAME,
        "configMap": {"name": naming.config_map_name(job.name), "items": items},
    }


def _launcher_template_copy(job: MPIJob) -> dict[str, Any]:
    launcher = job.spec.launcher
    return copy_template(launcher.template if launcher is not None else {})


def new_launcher_pod_template(
    job: Mapping[str, Any], *, gang_scheduling: str = ""
) -> dict[str, Any]:
    """The launcher Job's pod template (a PodTemplateSpec dict)."""
    view = parse_mpi_job(job)
    template = _launcher_template_copy(view)
    template["metadata"]["labels"].update(naming.default_labels(view.name, constants.ROLE_LAUNCHER))
    decorate_pod_template(template, view.name, gang_scheduling)
    if view.run_launcher_as_worker:
        template["metadata"]["labels"][constants.REPLICA_INDEX_LABEL] = "0"
    spec = template["spec"]
    spec["hostname"] = naming.launcher_name(view.name)
    spec["subdomain"] = view.name
    if spec.get("hostNetwork") is True:
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    container = first_container(spec)
    if container is not None:
        append_env(container, launcher_env(view))
    setup_ssh_on_pod(spec, view)
    set_restart_policy(spec, view.spec.launcher)
    spec["volumes"] = [*spec["volumes"], _config_volume(view)]
    if container is not None:
        mount = {"name": naming.CONFIG_VOLUME_NAME, "mountPath": naming.CONFIG_MOUNT_PATH}
        container["volumeMounts"] = [*container["volumeMounts"], mount]
    metadata: dict[str, Any] = {"labels": template["metadata"]["labels"]}
    annotations = as_dict(template["metadata"].get("annotations"))
    if annotations:
        metadata["annotations"] = annotations
    metadata["ownerReferences"] = [naming.controller_ref(job)]
    return {"metadata": metadata, "spec": spec}


def launcher_template_events(job: Mapping[str, Any]) -> list[Event]:
    """Events upstream records each time it builds the launcher template: a Warning
    ``SetPodTemplateRestartPolicy`` when the template sets its own restartPolicy."""
    launcher = parse_mpi_job(job).spec.launcher
    if launcher is not None and launcher.pod_spec.get("restartPolicy"):
        return [
            Event(
                constants.EVENT_TYPE_WARNING,
                constants.EVENT_SET_POD_TEMPLATE_RESTART_POLICY,
                RESTART_POLICY_OVERRIDDEN_MESSAGE,
            )
        ]
    return []


def new_launcher_job(job: Mapping[str, Any], *, gang_scheduling: str = "") -> dict[str, Any]:
    """The launcher ``batch/v1`` Job of ``job`` (a defaulted MPIJob dict)."""
    view = parse_mpi_job(job)
    policy = view.spec.run_policy
    spec: dict[str, Any] = {}
    # With `mpi-controller.io/ttl-deletes: MPIJob` the TTL deletes the MPIJob (and with it the
    # launcher); a TTL of the launcher's own could delete it before its outcome is seen.
    ttl = None if ttl_deletes_mpijob(job) else policy.ttl_seconds_after_finished
    for key, value in (
        ("ttlSecondsAfterFinished", ttl),
        ("activeDeadlineSeconds", policy.active_deadline_seconds),
        ("backoffLimit", policy.backoff_limit),
    ):
        if value is not None:
            spec[key] = value
    spec["podReplacementPolicy"] = "Failed"
    if view.suspended:
        spec["suspend"] = True
    spec["template"] = new_launcher_pod_template(job, gang_scheduling=gang_scheduling)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": naming.launcher_name(view.name),
            "namespace": view.namespace,
            "labels": {"app": view.name},
            "ownerReferences": [naming.controller_ref(job)],
        },
        "spec": spec,
    }


def sync_launcher_scheduling_directives(
    launcher: Mapping[str, Any], desired_template: Mapping[str, Any]
) -> dict[str, Any]:
    """A copy of ``launcher`` whose template takes ``desired_template``'s labels and
    annotations (merged, desired wins) and its nodeSelector, tolerations and schedulingGates
    (replaced wholesale; absent in desired → removed). Upstream
    ``syncLauncherSchedulingDirectives``, the Kueue interop on resume."""
    out = json_copy(dict(launcher))
    spec = out["spec"] = as_dict(out.get("spec"))
    template = spec["template"] = as_dict(spec.get("template"))
    meta = template["metadata"] = as_dict(template.get("metadata"))
    want_meta = as_dict(desired_template.get("metadata"))
    for key in ("labels", "annotations"):
        merged = {**as_dict(meta.get(key)), **as_dict(want_meta.get(key))}
        if merged:
            meta[key] = json_copy(merged)
        else:
            meta.pop(key, None)
    pod_spec = template["spec"] = as_dict(template.get("spec"))
    want_spec = as_dict(desired_template.get("spec"))
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        if want_spec.get(key) is None:
            pod_spec.pop(key, None)
        else:
            pod_spec[key] = json_copy(want_spec[key])
    return out


def clear_launcher_start_time(launcher: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``launcher`` without ``status.startTime`` (to send to ``jobs/status`` before
    resuming, because a started Job's template is immutable), or ``None`` if it has none."""
    if as_record(launcher.get("status")).get("startTime") is None:
        return None
    out = json_copy(dict(launcher))
    out["status"] = {k: v for k, v in as_dict(out.get("status")).items() if k != "startTime"}
    return out


def resume_launcher(
    launcher: Mapping[str, Any], job: Mapping[str, Any], *, gang_scheduling: str = ""
) -> dict[str, Any]:
    """The resumed launcher Job to send: scheduling directives synced from the MPIJob's
    current launcher template, ``spec.suspend = false``."""
    desired = new_launcher_pod_template(job, gang_scheduling=gang_scheduling)
    out = sync_launcher_scheduling_directives(launcher, desired)
    out["spec"]["suspend"] = False
    return out


def suspend_launcher(launcher: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``launcher`` with ``spec.suspend = true``."""
    out = json_copy(dict(launcher))
    out["spec"] = {**as_dict(out.get("spec")), "suspend": True}
    return out
