"""A typed, read-only view of a TFJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_tfjob` gives code a typed way
to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset. The
shared parts (name, namespace, replica specs, run policy) are the engine's ``kubeflow.org/v1``
view, :class:`~mpi_controller.engine.training.api.TrainingJob`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.engine.training.api import TrainingJob, parse_job
from mpi_controller.kube.jsonvalue import as_bool, as_dict, as_str
from mpi_controller.tensorflow.constants import (
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_MASTER,
    SPECS_FIELD,
    SUCCESS_POLICY_ALL_WORKERS,
)

__all__ = ["TFJob", "is_chief_or_master", "parse_tfjob"]


def is_chief_or_master(rtype: str) -> bool:
    return rtype in (REPLICA_TYPE_CHIEF, REPLICA_TYPE_MASTER)


@dataclass(frozen=True)
class TFJob(TrainingJob):
    """The parts of a TFJob the controller reads."""

    success_policy: str = ""
    enable_dynamic_worker: bool = False

    @property
    def has_chief_or_master(self) -> bool:
        return any(is_chief_or_master(t) for t in self.replica_specs)

    @property
    def all_workers_must_succeed(self) -> bool:
        """``successPolicy: AllWorkers``."""
        return self.success_policy == SUCCESS_POLICY_ALL_WORKERS


def parse_tfjob(job: Mapping[str, Any]) -> TFJob:
    spec = as_dict(job.get("spec"))
    return parse_job(TFJob, job, SPECS_FIELD, success_policy=as_str(spec.get("successPolicy")),
                     enable_dynamic_worker=as_bool(spec.get("enableDynamicWorker")) is True)
