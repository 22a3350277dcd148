"""The MPIJob API ``kubeflow.org/v2beta1`` (mpi-operator v0.8.2): typed view, defaults,
validation. Pure: no I/O.

MPIJobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_mpi_job` gives a typed
read-only view. :func:`set_defaults` returns a defaulted deep copy; :func:`validate` returns
upstream's field errors in upstream's order. Neither raises on malformed input.
"""

from mpi_controller.mpi.v2beta1.defaults import set_defaults
from mpi_controller.mpi.v2beta1.types import (
    MPIJob,
    MPIJobSpec,
    ReplicaSpec,
    RunPolicy,
    SchedulingPolicy,
    parse_mpi_job,
)
from mpi_controller.mpi.v2beta1.validation import admitted_problems, validate

__all__ = [
    "MPIJob",
    "MPIJobSpec",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
    "admitted_problems",
    "parse_mpi_job",
    "set_defaults",
    "validate",
]
