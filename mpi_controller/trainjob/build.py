"""The objects a TrainJob's runtime makes (Trainer v2.3.0's ``TrainingRuntime.NewObjects``:
the runtime info, the ML-policy plugins, then the JobSet plugin's build), as one pure call:
:func:`desired_jobset`.

The plain, torch, JAX and XGBoost policies are applied (in that order); a runtime with an MPI
or Flux policy is refused (:class:`UnsupportedPolicy`) rather than given a JobSet without that
policy's additions (its hostfile ConfigMap, SSH Secret, launcher)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.trainjob.info import runtime_info
from mpi_controller.trainjob.jax import enforce_jax
from mpi_controller.trainjob.jobset import build_jobset
from mpi_controller.trainjob.plainml import enforce_plain
from mpi_controller.trainjob.torch import enforce_torch
from mpi_controller.trainjob.xgboost import enforce_xgboost

__all__ = ["UNSUPPORTED_POLICIES", "UnsupportedPolicy", "desired_jobset"]

UNSUPPORTED_POLICIES = ("mpi", "flux")


class UnsupportedPolicy(ValueError):
    """The runtime's ML policy is one this version does not build yet."""


def desired_jobset(trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any]) -> \
        dict[str, Any]:
    policy = runtime_spec.get("mlPolicy") or {}
    for name in UNSUPPORTED_POLICIES:
        if policy.get(name) is not None:
            raise UnsupportedPolicy(f"the {name} ML policy is not supported yet")
    info = runtime_info(trainjob, runtime_spec)
    enforce_plain(info, trainjob)
    enforce_torch(info, trainjob)
    enforce_jax(info, trainjob)
    enforce_xgboost(info, trainjob)
    return build_jobset(info, trainjob)
