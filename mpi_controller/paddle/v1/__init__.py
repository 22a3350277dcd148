"""The PaddleJob API, ``kubeflow.org/v1``: a typed view, defaults and validation (pure)."""

from mpi_controller.paddle.v1.defaults import set_defaults
from mpi_controller.paddle.v1.types import (
    ElasticPolicy,
    PaddleJob,
    is_master_role,
    parse_elastic_policy,
    parse_paddlejob,
)
from mpi_controller.paddle.v1.validation import validate, validate_update

__all__ = ["ElasticPolicy", "PaddleJob", "is_master_role", "parse_elastic_policy",
           "parse_paddlejob", "set_defaults", "validate", "validate_update"]
