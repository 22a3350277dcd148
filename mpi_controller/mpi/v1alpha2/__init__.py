"""The MPIJob API ``kubeflow.org/v1alpha2`` of mpi-operator v0.2.3: typed view, defaults,
validation. Pure: no I/O.

Jobs created through ``v1alpha2`` are stored as ``v2beta1``
(:mod:`mpi_controller.mpi.conversion`); ``conversion.convert(job, "v1alpha2")`` gives back the
``v1alpha2`` object these functions take.
"""

from mpi_controller.mpi.v1alpha2.defaults import DEFAULT_BACKOFF_LIMIT, set_defaults
from mpi_controller.mpi.v1alpha2.types import MPIJob, MPIJobSpec, parse_mpi_job
from mpi_controller.mpi.v1alpha2.validation import validate

__all__ = [
    "DEFAULT_BACKOFF_LIMIT",
    "MPIJob",
    "MPIJobSpec",
    "parse_mpi_job",
    "set_defaults",
    "validate",
]
