"""A typed, read-only view of a JAXJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_jaxjob` gives code a typed way
to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset. The
spec is the shared run policy and one map of replica specs (``jaxReplicaSpecs``), read with the
engine's ``kubeflow.org/v1`` view, :class:`~mpi_controller.engine.training.api.TrainingJob`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob, parse_job
from mpi_controller.jax.constants import REPLICA_TYPE_WORKER, SPECS_FIELD

__all__ = ["JAXJob", "parse_jaxjob"]


@dataclass(frozen=True)
class JAXJob(TrainingJob):
    """The parts of a JAXJob the controller reads."""

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_WORKER)


def parse_jaxjob(job: Mapping[str, Any]) -> JAXJob:
    return parse_job(JAXJob, job, SPECS_FIELD)
