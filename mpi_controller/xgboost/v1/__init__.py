"""The XGBoostJob API, ``kubeflow.org/v1``: a typed view, defaults and validation (pure)."""

from mpi_controller.xgboost.v1.defaults import set_defaults
from mpi_controller.xgboost.v1.types import XGBoostJob, parse_xgboostjob
from mpi_controller.xgboost.v1.validation import validate, validate_update

__all__ = ["XGBoostJob", "parse_xgboostjob", "set_defaults", "validate", "validate_update"]
