"""A typed, read-only view of a PaddleJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_paddlejob` gives code a typed
way to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset
(``None``, Go's nil pointer). The shared parts (name, namespace, replica specs, run policy) are
the engine's ``kubeflow.org/v1`` view, :class:`~mpi_controller.engine.training.api.TrainingJob`.

The job's mode follows from its replica types: with a ``Master`` it runs in
**parameter-server** mode (the masters are the servers, the workers the trainers), without one
in **collective** mode (workers alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob, parse_job
from mpi_controller.kube.jsonvalue import as_dict, as_int
from mpi_controller.paddle.constants import (
    ELASTIC_POLICY,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
    SPECS_FIELD,
)

__all__ = ["ElasticPolicy", "PaddleJob", "is_master_role", "parse_elastic_policy",
           "parse_paddlejob"]


def is_master_role(rtype: str) -> bool:
    """``IsMasterRole``: the pods of the Master type, every index, get
    ``training.kubeflow.org/job-role: master``; no other pod does (in collective mode none,
    unlike TFJob's and PyTorchJob's worker 0)."""
    return rtype == REPLICA_TYPE_MASTER


@dataclass(frozen=True)
class ElasticPolicy:
    """``spec.elasticPolicy`` (upstream's ``PaddleElasticPolicy``); ``None`` fields are unset.
    ``metrics`` are autoscaling/v2 MetricSpecs as written. The controller only defaults
    ``minReplicas``/``maxReplicas``: no field reaches a pod, and no autoscaler is made."""

    min_replicas: int | None = None
    max_replicas: int | None = None
    max_restarts: int | None = None
    metrics: list[Any] | None = None


def parse_elastic_policy(raw: object) -> ElasticPolicy | None:
    """The policy of ``spec.elasticPolicy`` (``None`` when it is not an object)."""
    if not isinstance(raw, dict):
        return None
    metrics = raw.get("metrics")
    return ElasticPolicy(
        min_replicas=as_int(raw.get("minReplicas")),
        max_replicas=as_int(raw.get("maxReplicas")),
        max_restarts=as_int(raw.get("maxRestarts")),
        metrics=metrics if isinstance(metrics, list) else None,
    )


@dataclass(frozen=True)
class PaddleJob(TrainingJob):
    """The parts of a PaddleJob the controller reads."""

    elastic_policy: ElasticPolicy | None = None

    @property
    def master(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_MASTER)

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_WORKER)

    @property
    def parameter_server_mode(self) -> bool:
        """A Master spec exists (upstream's ``ContainsMasterSpec``); else collective mode."""
        return self.master is not None


def parse_paddlejob(job: Mapping[str, Any]) -> PaddleJob:
    spec = as_dict(job.get("spec"))
    return parse_job(PaddleJob, job, SPECS_FIELD,
                     elastic_policy=parse_elastic_policy(spec.get(ELASTIC_POLICY)))
