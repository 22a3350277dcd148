"""Shared steps that turn a replica's pod template into a launcher or worker pod spec.

All functions work on a fresh deep copy made by :func:`copy_template`, whose ``metadata``,
``metadata.labels`` and ``spec`` are guaranteed dicts; they never raise on malformed templates
(a missing or non-object first container is simply not decorated).
"""

from __future__ import annotations

from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_list, json_copy
from mpi_controller.mpi import constants, naming
from mpi_controller.mpi.v2beta1.types import MPIJob, ReplicaSpec

__all__ = [
    "append_env",
    "copy_template",
    "first_container",
    "set_restart_policy",
    "setup_ssh_on_pod",
    "ssh_volume",
]

_SSH_MODE_ROOT = 0o600


def copy_template(template: object) -> dict[str, Any]:
    """A deep copy of ``template`` with dict ``metadata``, ``metadata.labels`` and ``spec``."""
    out = json_copy(template) if isinstance(template, dict) else {}
    meta = out["metadata"] = dict(as_dict(out.get("metadata")))
    meta["labels"] = dict(as_dict(meta.get("labels")))
    out["spec"] = as_dict(out.get("spec"))
    return out


def first_container(spec: dict[str, Any]) -> dict[str, Any] | None:
    """``spec.containers[0]`` if it exists and is an object."""
    containers = as_list(spec.get("containers"))
    if containers and isinstance(containers[0], dict):
        return containers[0]
    return None


def _append(obj: dict[str, Any], key: str, items: list[dict[str, Any]]) -> None:
    obj[key] = [*as_list(obj.get(key)), *items]


def append_env(container: dict[str, Any], env: list[dict[str, Any]]) -> None:
    """Append ``env`` entries after the user's own."""
    _append(container, "env", env)


def ssh_volume(job: MPIJob) -> dict[str, Any]:
    """The ``ssh-auth`` Secret volume: mode 0600 only for ``/root/.ssh`` (else k8s 0644)."""
    secret: dict[str, Any] = {"secretName": naming.ssh_secret_name(job.name)}
    if job.spec.ssh_auth_mount_path == naming.ROOT_SSH_PATH:
        secret["defaultMode"] = _SSH_MODE_ROOT
    secret["items"] = [
        {"key": naming.SSH_PRIVATE_KEY, "path": naming.SSH_PRIVATE_KEY_FILE},
        {"key": naming.SSH_PUBLIC_KEY, "path": naming.SSH_PUBLIC_KEY_FILE},
        {"key": naming.SSH_PUBLIC_KEY, "path": naming.SSH_AUTHORIZED_KEYS_FILE},
    ]
    return {"name": naming.SSH_AUTH_VOLUME, "secret": secret}


def setup_ssh_on_pod(spec: dict[str, Any], job: MPIJob) -> None:
    """Append the SSH volume, and its mount on container[0] (upstream ``setupSSHOnPod``)."""
    _append(spec, "volumes", [ssh_volume(job)])
    container = first_container(spec)
    if container is not None:
        mount = {"name": naming.SSH_AUTH_VOLUME, "mountPath": job.spec.ssh_auth_mount_path}
        _append(container, "volumeMounts", [mount])


def set_restart_policy(spec: dict[str, Any], replica: ReplicaSpec | None) -> None:
    """Pod ``restartPolicy`` = the replica's (``ExitCode`` → ``Never``; unset → omitted)."""
    policy = replica.restart_policy if replica is not None else ""
    if policy == constants.RESTART_POLICY_EXIT_CODE:
        policy = constants.RESTART_POLICY_NEVER
    if policy:
        spec["restartPolicy"] = policy
    else:
        spec.pop("restartPolicy", None)
