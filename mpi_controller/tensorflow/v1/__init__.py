"""The TFJob API, ``kubeflow.org/v1``: a typed view, defaults and validation (pure)."""

from mpi_controller.tensorflow.v1.defaults import set_defaults
from mpi_controller.tensorflow.v1.types import TFJob, is_chief_or_master, parse_tfjob
from mpi_controller.tensorflow.v1.validation import (
    admitted_problems,
    validate,
    validate_sync,
    validate_update,
)

__all__ = [
    "TFJob",
    "admitted_problems",
    "is_chief_or_master",
    "parse_tfjob",
    "set_defaults",
    "validate",
    "validate_sync",
    "validate_update",
]
