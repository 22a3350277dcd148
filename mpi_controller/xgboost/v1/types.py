"""A typed, read-only view of an XGBoostJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_xgboostjob` gives code a typed
way to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset.
An XGBoostJob has nothing beyond the shared ``kubeflow.org/v1`` parts (its replica specs under
``spec.xgbReplicaSpecs`` and ``spec.runPolicy``), which are the engine's views.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, RunPolicy, replica_specs, run_policy
from mpi_controller.kube.jsonvalue import as_dict, as_str
from mpi_controller.xgboost.constants import REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER, SPECS_FIELD

__all__ = ["XGBoostJob", "parse_xgboostjob"]


@dataclass(frozen=True)
class XGBoostJob:
    """The parts of an XGBoostJob the controller reads."""

    name: str = ""
    namespace: str = ""
    replica_specs: dict[str, ReplicaSpec] = field(default_factory=dict)
    run_policy: RunPolicy = field(default_factory=RunPolicy)

    @property
    def master(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_MASTER)

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_WORKER)

    @property
    def total_replicas(self) -> int:
        """The replicas of every replica type (``computeTotalReplicas``)."""
        return sum(spec.replicas for spec in self.replica_specs.values())


def parse_xgboostjob(job: Mapping[str, Any]) -> XGBoostJob:
    meta = as_dict(job.get("metadata"))
    return XGBoostJob(
        name=as_str(meta.get("name")),
        namespace=as_str(meta.get("namespace")),
        replica_specs=replica_specs(job, SPECS_FIELD),
        run_policy=run_policy(job),
    )
