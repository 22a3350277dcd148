"""Defaulting of a ``kubeflow.org/v1`` MPIJob, as training-operator v1.9 does it in memory.

:func:`set_defaults` (``SetDefaults_MPIJob``) returns a defaulted deep copy; it never raises
and leaves parts of the wrong JSON type alone:

1. when neither ``spec.cleanPodPolicy`` nor ``spec.runPolicy.cleanPodPolicy`` is set, both
   become ``None``;
2. Launcher ``replicas`` → 1, Worker ``replicas`` → 0 (replica specs that are present);
3. both ``restartPolicy`` → ``Never`` when empty.

:func:`sync_clean_pod_policy` is what ``Reconcile`` does next: ``runPolicy.cleanPodPolicy``
wins when set, otherwise the top-level value is copied into it; both then hold the same value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import json_copy
from mpi_controller.mpi import constants

__all__ = ["default_replica", "set_defaults", "spec_of", "sync_clean_pod_policy"]

DEFAULT_RESTART_POLICY = "Never"


def spec_of(job: Mapping[str, Any]) -> tuple[Any, dict[str, Any] | None]:
    """A deep copy of ``job`` and its ``spec`` dict in that copy (created when unset; ``None``
    when the copy or its spec is not an object)."""
    out: Any = json_copy(job)
    if not isinstance(out, dict):
        return out, None
    if out.get("spec") is None:
        out["spec"] = {}
    spec = out["spec"]
    return out, spec if isinstance(spec, dict) else None


def default_replica(specs: object, kind: str, *, replicas: int | None,
                    restart_policy: str | None) -> None:
    """Default ``replicas`` (when ``None``) and an empty ``restartPolicy`` of the replica spec
    ``kind`` in ``specs``, when both are objects."""
    spec = specs.get(kind) if isinstance(specs, dict) else None
    if not isinstance(spec, dict):
        return
    if replicas is not None and spec.get("replicas") is None:
        spec["replicas"] = replicas
    if restart_policy is not None and spec.get("restartPolicy") in (None, ""):
        spec["restartPolicy"] = restart_policy


def _run_policy(spec: dict[str, Any]) -> Any:
    """``spec.runPolicy``, created when unset (a struct, not a pointer, in Go)."""
    if spec.get("runPolicy") is None:
        spec["runPolicy"] = {}
    return spec["runPolicy"]


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``job`` with training-operator's defaults (module docstring)."""
    out, spec = spec_of(job)
    if spec is None:
        return out  # type: ignore[no-any-return]
    run_policy = _run_policy(spec)
    if isinstance(run_policy, dict) and spec.get("cleanPodPolicy") is None \
            and run_policy.get("cleanPodPolicy") is None:
        spec["cleanPodPolicy"] = run_policy["cleanPodPolicy"] = constants.CLEAN_POD_POLICY_NONE
    specs = spec.get("mpiReplicaSpecs")
    default_replica(specs, constants.REPLICA_TYPE_LAUNCHER, replicas=1,
                    restart_policy=DEFAULT_RESTART_POLICY)
    default_replica(specs, constants.REPLICA_TYPE_WORKER, replicas=0,
                    restart_policy=DEFAULT_RESTART_POLICY)
    return out  # type: ignore[no-any-return]


def sync_clean_pod_policy(job: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``job`` with both clean-pod-policy fields set to the effective one."""
    out, spec = spec_of(job)
    if spec is None:
        return out  # type: ignore[no-any-return]
    run_policy = _run_policy(spec)
    if isinstance(run_policy, dict):
        value = run_policy.get("cleanPodPolicy")
        if value is None:
            value = spec.get("cleanPodPolicy")
        spec["cleanPodPolicy"] = run_policy["cleanPodPolicy"] = value
        if value is None:
            del spec["cleanPodPolicy"], run_policy["cleanPodPolicy"]
    return out  # type: ignore[no-any-return]
