"""A typed, read-only view of an XGBoostJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_xgboostjob` gives code a typed
way to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset.
An XGBoostJob has nothing beyond the shared ``kubeflow.org/v1`` parts (its replica specs under
``spec.xgbReplicaSpecs`` and ``spec.runPolicy``), which are the engine's view,
:class:`~mpi_controller.engine.training.api.TrainingJob`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob, parse_job
from mpi_controller.xgboost.constants import REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER, SPECS_FIELD

__all__ = ["XGBoostJob", "parse_xgboostjob"]


@dataclass(frozen=True)
class XGBoostJob(TrainingJob):
    """The parts of an XGBoostJob the controller reads."""

    @property
    def master(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_MASTER)

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_WORKER)


def parse_xgboostjob(job: Mapping[str, Any]) -> XGBoostJob:
    return parse_job(XGBoostJob, job, SPECS_FIELD)
