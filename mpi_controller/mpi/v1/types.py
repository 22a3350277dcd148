"""A typed, read-only view of a training-operator ``kubeflow.org/v1`` MPIJob, parsed leniently.

As :mod:`mpi_controller.mpi.v2beta1.types`: objects stay plain dicts; :func:`parse_mpi_job`
never raises (a field of the wrong JSON type reads as unset). Fields follow training-operator
v1.9's ``MPIJobSpec``: ``slotsPerWorker``, the top-level ``cleanPodPolicy``,
``mpiReplicaSpecs``, ``mainContainer`` and ``runPolicy`` (the same ``RunPolicy`` as
``v2beta1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpi_controller.kube.jsonvalue import as_dict, as_int, as_record, as_str
from mpi_controller.mpi.v2beta1.types import (
    JobMeta,
    ReplicaSpec,
    RunPolicy,
    parse_metadata,
    parse_replica_specs,
    parse_run_policy,
)

__all__ = ["MPIJob", "MPIJobSpec", "parse_mpi_job", "parse_spec_fields"]


@dataclass(frozen=True)
class MPIJobSpec:
    """``spec``. ``mpi_replica_specs`` is ``None`` when the map is absent; a key mapped to
    ``None`` is a present-but-null replica spec."""

    slots_per_worker: int | None = None
    clean_pod_policy: str | None = None
    mpi_replica_specs: dict[str, ReplicaSpec | None] | None = None
    main_container: str = ""
    run_policy: RunPolicy = field(default_factory=RunPolicy)

    def replica(self, replica_type: str) -> ReplicaSpec | None:
        """The replica spec of ``replica_type`` (``Launcher`` or ``Worker``), or ``None``."""
        return (self.mpi_replica_specs or {}).get(replica_type)

    @property
    def slots(self) -> int:
        """Slots per worker in the hostfile: ``slotsPerWorker``, 1 when unset (controller)."""
        return 1 if self.slots_per_worker is None else self.slots_per_worker


@dataclass(frozen=True)
class MPIJob(JobMeta):
    spec: MPIJobSpec = field(default_factory=MPIJobSpec)


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def parse_spec_fields(spec: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :class:`MPIJobSpec` read from a ``spec`` dict (shared with
    ``v1alpha2``, whose spec has these fields too)."""
    return {
        "slots_per_worker": as_int(spec.get("slotsPerWorker")),
        "clean_pod_policy": _opt_str(spec.get("cleanPodPolicy")),
        "mpi_replica_specs": parse_replica_specs(spec.get("mpiReplicaSpecs")),
        "main_container": as_str(spec.get("mainContainer")),
        "run_policy": parse_run_policy(spec.get("runPolicy")),
    }


def parse_mpi_job(job: object) -> MPIJob:
    """A typed view of ``job`` (any value; malformed parts read as unset). Never raises."""
    spec = MPIJobSpec(**parse_spec_fields(as_dict(as_record(job).get("spec"))))
    return MPIJob(**parse_metadata(job), spec=spec)
