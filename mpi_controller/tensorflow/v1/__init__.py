"""The TFJob API, ``kubeflow.org/v1``: a typed view, defaults and validation (pure)."""

from mpi_controller.tensorflow.v1.defaults import set_defaults
from mpi_controller.tensorflow.v1.types import TFJob, is_chief_or_master, parse_tfjob
from mpi_controller.tensorflow.v1.validation import validate, validate_update

__all__ = ["TFJob", "is_chief_or_master", "parse_tfjob", "set_defaults", "validate",
           "validate_update"]
