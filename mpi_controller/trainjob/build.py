"""The objects a TrainJob's runtime makes (Trainer v2.3.0's ``TrainingRuntime.NewObjects``:
the runtime info, the ML-policy plugins, the pod network, then the component builders), as one
pure call: :func:`desired_objects` (and :func:`desired_jobset`, its JobSet alone).

The plain, torch, MPI, JAX and XGBoost policies are applied (in that order: upstream runs them
in a Go map's order, which only changes the order of environment variables where two of them
apply, plain and XGBoost); a runtime with a Flux policy is refused
(:class:`UnsupportedPolicy`) rather than given a JobSet without that policy's additions.
With the MPI policy the objects also include the hostfile ConfigMap, and the SSH Secret is
needed (:attr:`Desired.ssh_secret`: made once by the caller, when it does not exist). With a
``podGroupPolicy`` the pods get their group's label or annotation and the objects include the
PodGroup (:mod:`.podgroups`: its resources are one pod's requests as the runtime info was made,
before the ML policies)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.trainjob.info import runtime_info
from mpi_controller.trainjob.jax import enforce_jax
from mpi_controller.trainjob.jobset import build_jobset
from mpi_controller.trainjob.mpi import enforce_mpi, hostfile_configmap
from mpi_controller.trainjob.plainml import enforce_plain
from mpi_controller.trainjob.podgroups import (
    enforce_pod_group_policy,
    pod_group,
    single_pod_requests,
)
from mpi_controller.trainjob.torch import enforce_torch
from mpi_controller.trainjob.xgboost import enforce_xgboost

__all__ = ["UNSUPPORTED_POLICIES", "Desired", "UnsupportedPolicy", "desired_jobset",
           "desired_objects"]

UNSUPPORTED_POLICIES = ("flux",)


class UnsupportedPolicy(ValueError):
    """The runtime's ML policy is one this version does not build yet."""


@dataclass(frozen=True)
class Desired:
    """What a TrainJob needs: its JobSet, the MPI hostfile ConfigMap (or ``None``), whether
    it needs its MPI SSH Secret, and its PodGroup (or ``None``)."""

    jobset: dict[str, Any]
    hostfile: dict[str, Any] | None
    ssh_secret: bool
    pod_group: dict[str, Any] | None = None


def desired_objects(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> Desired:
    policy = runtime_spec.get("mlPolicy") or {}
    for name in UNSUPPORTED_POLICIES:
        if policy.get(name) is not None:
            raise UnsupportedPolicy(f"the {name} ML policy is not supported yet")
    info = runtime_info(trainjob, runtime_spec)
    requests = single_pod_requests(info)
    enforce_plain(info, trainjob)
    enforce_torch(info, trainjob)
    enforce_mpi(info, trainjob)
    enforce_jax(info, trainjob)
    enforce_xgboost(info, trainjob)
    enforce_pod_group_policy(info, trainjob)
    group = pod_group(info, trainjob, requests)
    mpi = policy.get("mpi") is not None
    hostfile = hostfile_configmap(info, trainjob) if mpi else None
    return Desired(jobset=build_jobset(info, trainjob), hostfile=hostfile, ssh_secret=mpi,
                   pod_group=group)


def desired_jobset(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> \
        dict[str, Any]:
    return desired_objects(trainjob, runtime_spec).jobset
