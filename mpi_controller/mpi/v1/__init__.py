"""The MPIJob API ``kubeflow.org/v1`` of the Kubeflow training-operator (v1.9): typed view,
defaults, validation. Pure: no I/O.

Jobs created through ``v1`` are stored as ``v2beta1`` (:mod:`mpi_controller.mpi.conversion`);
``conversion.convert(job, "v1")`` gives back the ``v1`` object these functions take.
"""

from mpi_controller.mpi.v1.defaults import set_defaults, sync_clean_pod_policy
from mpi_controller.mpi.v1.types import MPIJob, MPIJobSpec, parse_mpi_job
from mpi_controller.mpi.v1.validation import SpecError, validate

__all__ = [
    "MPIJob",
    "MPIJobSpec",
    "SpecError",
    "parse_mpi_job",
    "set_defaults",
    "sync_clean_pod_policy",
    "validate",
]
