"""Defaulting of a ``kubeflow.org/v1alpha2`` MPIJob, as mpi-operator v0.2.3's
``SetDefaults_MPIJob`` does it (in memory only; nothing is written back).

:func:`set_defaults` returns a defaulted deep copy, never raises:

1. ``spec.backoffLimit`` → 6;
2. ``spec.cleanPodPolicy`` → ``None``;
3. Launcher ``restartPolicy``: anything but ``Never`` becomes ``OnFailure`` (a batch Job
   allows only those two);
4. Worker: nothing (its pods run in a StatefulSet, ``restartPolicy: Always``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.mpi import constants
from mpi_controller.mpi.v1.defaults import spec_of

__all__ = ["DEFAULT_BACKOFF_LIMIT", "set_defaults"]

DEFAULT_BACKOFF_LIMIT = 6


def set_defaults(job: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of ``job`` with v0.2.3's defaults (see the module docstring)."""
    out, spec = spec_of(job)
    if spec is None:
        return out  # type: ignore[no-any-return]
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = DEFAULT_BACKOFF_LIMIT
    if spec.get("cleanPodPolicy") is None:
        spec["cleanPodPolicy"] = constants.CLEAN_POD_POLICY_NONE
    specs = spec.get("mpiReplicaSpecs")
    launcher = specs.get(constants.REPLICA_TYPE_LAUNCHER) if isinstance(specs, dict) else None
    if isinstance(launcher, dict) and launcher.get("restartPolicy") != "Never":
        launcher["restartPolicy"] = "OnFailure"
    return out  # type: ignore[no-any-return]
