"""The PyTorchJob API, ``kubeflow.org/v1``: a typed view, defaults and validation (pure)."""

from mpi_controller.pytorch.v1.defaults import set_defaults
from mpi_controller.pytorch.v1.types import (
    ElasticPolicy,
    PyTorchJob,
    parse_elastic_policy,
    parse_pytorchjob,
)
from mpi_controller.pytorch.v1.validation import (
    admitted_problems,
    validate,
    validate_update,
    validation_warnings,
)

__all__ = [
    "ElasticPolicy",
    "PyTorchJob",
    "admitted_problems",
    "parse_elastic_policy",
    "parse_pytorchjob",
    "set_defaults",
    "validate",
    "validate_update",
    "validation_warnings",
]
