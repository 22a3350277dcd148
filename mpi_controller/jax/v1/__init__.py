"""The JAXJob API, ``kubeflow.org/v1``: a typed view, defaults and validation (pure)."""

from mpi_controller.jax.v1.defaults import set_defaults
from mpi_controller.jax.v1.types import JAXJob, parse_jaxjob
from mpi_controller.jax.v1.validation import validate, validate_update

__all__ = ["JAXJob", "parse_jaxjob", "set_defaults", "validate", "validate_update"]
