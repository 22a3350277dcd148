"""A typed, read-only view of a PyTorchJob (``kubeflow.org/v1``), parsed leniently.

Jobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_pytorchjob` gives code a typed
way to read a (defaulted) one and never raises: a field of the wrong JSON type reads as unset
(``None``, Go's nil pointer). The shared parts (name, namespace, replica specs, run policy) are
the engine's ``kubeflow.org/v1`` view, :class:`~mpi_controller.engine.training.api.TrainingJob`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob, parse_job
from mpi_controller.kube.jsonvalue import (
    as_bool,
    as_dict,
    as_int,
    as_list,
    as_opt_str,
    as_record,
    as_str,
)
from mpi_controller.pytorch.constants import (
    ELASTIC_POLICY,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
    SPECS_FIELD,
)

__all__ = ["ElasticPolicy", "PyTorchJob", "parse_elastic_policy", "parse_pytorchjob"]


@dataclass(frozen=True)
class ElasticPolicy:
    """``spec.elasticPolicy``; ``None`` fields are unset. ``rdzv_conf`` keeps the entries'
    order (``None``: the list is unset); ``metrics`` are autoscaling/v2 MetricSpecs as written
    (``None``: unset, so no HPA)."""

    min_replicas: int | None = None
    max_replicas: int | None = None
    rdzv_backend: str | None = None
    rdzv_port: int | None = None
    rdzv_host: str | None = None
    rdzv_id: str | None = None
    rdzv_conf: tuple[tuple[str, str], ...] | None = None
    standalone: bool | None = None
    nproc_per_node: int | None = None
    """The deprecated ``elasticPolicy.nProcPerNode``."""
    max_restarts: int | None = None
    metrics: list[Any] | None = None


def parse_elastic_policy(raw: object) -> ElasticPolicy | None:
    """The policy of ``spec.elasticPolicy`` (``None`` when it is not an object)."""
    if not isinstance(raw, dict):
        return None
    conf = raw.get("rdzvConf")
    metrics = raw.get("metrics")
    return ElasticPolicy(
        min_replicas=as_int(raw.get("minReplicas")),
        max_replicas=as_int(raw.get("maxReplicas")),
        rdzv_backend=as_opt_str(raw.get("rdzvBackend")),
        rdzv_port=as_int(raw.get("rdzvPort")),
        rdzv_host=as_opt_str(raw.get("rdzvHost")),
        rdzv_id=as_opt_str(raw.get("rdzvId")),
        rdzv_conf=tuple((as_str(as_record(e).get("key")), as_str(as_record(e).get("value")))
                        for e in as_list(conf)) if isinstance(conf, list) else None,
        standalone=as_bool(raw.get("standalone")),
        nproc_per_node=as_int(raw.get("nProcPerNode")),
        max_restarts=as_int(raw.get("maxRestarts")),
        metrics=metrics if isinstance(metrics, list) else None,
    )


@dataclass(frozen=True)
class PyTorchJob(TrainingJob):
    """The parts of a PyTorchJob the controller reads."""

    elastic_policy: ElasticPolicy | None = None
    nproc_per_node: str | None = None
    """``spec.nprocPerNode`` (``auto``, ``cpu``, ``gpu`` or a number, as a string)."""

    @property
    def master(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_MASTER)

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica_specs.get(REPLICA_TYPE_WORKER)


def parse_pytorchjob(job: Mapping[str, Any]) -> PyTorchJob:
    spec = as_dict(job.get("spec"))
    return parse_job(PyTorchJob, job, SPECS_FIELD,
                     elastic_policy=parse_elastic_policy(spec.get(ELASTIC_POLICY)),
                     nproc_per_node=as_opt_str(spec.get("nprocPerNode")))
