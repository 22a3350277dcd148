"""The MPIJob API (``kubeflow.org/v2beta1``): constants, a typed view, defaults, validation.

Pure: no I/O. MPIJobs stay plain dicts in the Kubernetes JSON shape; :func:`parse_mpi_job`
gives a typed read-only view. :func:`set_defaults` returns a defaulted deep copy;
:func:`validate` returns upstream's field errors in upstream's order. Neither raises on
malformed input.

Constants live in :mod:`mpi_controller.api.constants` (``from mpi_controller.api import
constants``).
"""

from mpi_controller.api import constants
from mpi_controller.api.defaults import set_defaults
from mpi_controller.api.errors import ErrorType, FieldError, aggregate_message
from mpi_controller.api.types import (
    MPIJob,
    MPIJobSpec,
    ReplicaSpec,
    RunPolicy,
    SchedulingPolicy,
    parse_mpi_job,
)
from mpi_controller.api.validation import is_dns1035_label, validate

__all__ = [
    "ErrorType",
    "FieldError",
    "MPIJob",
    "MPIJobSpec",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
    "aggregate_message",
    "constants",
    "is_dns1035_label",
    "parse_mpi_job",
    "set_defaults",
    "validate",
]
