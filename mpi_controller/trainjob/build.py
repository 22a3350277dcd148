"""The objects a TrainJob's runtime makes (Trainer v2.3.0's ``TrainingRuntime.NewObjects``:
the runtime info, the ML-policy plugins, then the JobSet plugin's build), as one pure call:
:func:`desired_jobset`.

The torch policy and the plain one (a runtime with no framework policy) are applied; a runtime
with an MPI, JAX, XGBoost or Flux policy is refused (:class:`UnsupportedPolicy`) rather than
given a JobSet without that policy's additions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.trainjob.info import runtime_info
from mpi_controller.trainjob.jobset import build_jobset
from mpi_controller.trainjob.plainml import enforce_plain
from mpi_controller.trainjob.torch import enforce_torch

__all__ = ["UNSUPPORTED_POLICIES", "UnsupportedPolicy", "desired_jobset"]

UNSUPPORTED_POLICIES = ("mpi", "jax", "xgboost", "flux")


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
    return build_jobset(info, trainjob)
