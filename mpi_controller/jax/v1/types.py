"""A typed, read-only view of a JAXJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_jaxjob` gives code a typed way
to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset. The
spec is the shared run policy and one map of replica specs (``jaxReplicaSpecs``), read with the
engine's ``kubeflow.org/v1`` views.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, RunPolicy, replica_specs, run_policy
from mpi_controller.jax.constants import REPLICA_TYPE_WORKER, SPECS_FIELD
from mpi_controller.kube.jsonvalue import as_dict, as_str

__all__ = ["JAXJob", "parse_jaxjob"]


@dataclass(frozen=True)
class JAXJob:
    """The parts of a JAXJob the controller reads."""

    name: str = ""
    namespace: str = ""
    replica_specs: dict[str, ReplicaSpec] = field(default_factory=dict)
    run_policy: RunPolicy = field(default_factory=RunPolicy)

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_WORKER)

    @property
    def total_replicas(self) -> int:
        """The replicas of every replica type, summed (``NUM_PROCESSES``)."""
        return sum(spec.replicas for spec in self.replica_specs.values())


def parse_jaxjob(job: Mapping[str, Any]) -> JAXJob:
    meta = as_dict(job.get("metadata"))
    return JAXJob(
        name=as_str(meta.get("name")),
        namespace=as_str(meta.get("namespace")),
        replica_specs=replica_specs(job, SPECS_FIELD),
        run_policy=run_policy(job),
    )
