"""Defaulting of an MPIJob, as mpi-operator v0.8.2 ``SetDefaults_MPIJob`` does it.

:func:`set_defaults` returns a defaulted deep copy and never mutates its argument. It never
raises: a part of the object with the wrong JSON type is left as it is, for validation to
report. The rules (a value is "unset" when absent, ``null`` or, for strings, ``""``):

1. ``spec.runPolicy.cleanPodPolicy`` → ``None``;
2. ``spec.slotsPerWorker`` → ``1``;
3. ``spec.sshAuthMountPath`` → ``/root/.ssh``;
4. ``spec.mpiImplementation`` → ``OpenMPI``;
5. ``spec.launcherCreationPolicy`` → ``AtStartup``;
6. Launcher replica spec (when present): ``restartPolicy`` → ``OnFailure``, ``replicas`` → ``1``;
7. Worker replica spec (when present): ``restartPolicy`` → ``Never``, ``replicas`` → ``0``.

Like Go, ``runLauncherAsWorker`` and ``suspend`` are not defaulted (unset means false).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import json_copy
from mpi_controller.mpi import constants

__all__ = ["set_defaults"]


def _unset(value: object) -> bool:
    return value is None or value == ""


def _child(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The dict at ``parent[key]``, created when unset; ``None`` when it has another type."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def _default(obj: dict[str, Any], key: str, value: object) -> None:
    if _unset(obj.get(key)):
        obj[key] = value


def _default_replica(specs: dict[str, Any], kind: str, restart: str, replicas: int) -> None:
    spec = specs.get(kind)
    if isinstance(spec, dict):
        _default(spec, "restartPolicy", restart)
        if spec.get("replicas") is None:
            spec["replicas"] = replicas


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``job`` with the upstream defaults applied (see the module docstring)."""
    out: Any = json_copy(job)
    if not isinstance(out, dict):
        return out  # type: ignore[no-any-return]
    spec = _child(out, "spec")
    if spec is None:
        return out
    run_policy = _child(spec, "runPolicy")
    if run_policy is not None and run_policy.get("cleanPodPolicy") is None:
        run_policy["cleanPodPolicy"] = constants.CLEAN_POD_POLICY_NONE
    if spec.get("slotsPerWorker") is None:
        spec["slotsPerWorker"] = constants.DEFAULT_SLOTS_PER_WORKER
    _default(spec, "sshAuthMountPath", constants.DEFAULT_SSH_AUTH_MOUNT_PATH)
    _default(spec, "mpiImplementation", constants.MPI_IMPLEMENTATION_OPENMPI)
    _default(spec, "launcherCreationPolicy", constants.LAUNCHER_CREATION_POLICY_AT_STARTUP)
    specs = spec.get("mpiReplicaSpecs")
    if isinstance(specs, dict):
        _default_replica(specs, constants.REPLICA_TYPE_LAUNCHER,
                         constants.DEFAULT_LAUNCHER_RESTART_POLICY, 1)
        _default_replica(specs, constants.REPLICA_TYPE_WORKER, constants.DEFAULT_RESTART_POLICY, 0)
    return out
