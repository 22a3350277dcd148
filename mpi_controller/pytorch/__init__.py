"""The PyTorchJob kind (``kubeflow.org/v1``, training-operator v1.9), elastic training included:
its API, environment, init container, HPA, status rules, and the kind on the job engine.

Public (importable by other controllers; plain dicts in, plain dicts out, no I/O):

* :func:`initial_children`: everything the first sync of a job creates (its pods and
  Services, a PodGroup with gang scheduling), in creation order;
* the API: :func:`set_defaults`, :func:`validate`, :func:`validate_update`,
  :func:`validation_warnings` (upstream's webhook checks, messages and warnings),
  :func:`parse_pytorchjob` (:class:`PyTorchJob`, :class:`ElasticPolicy`);
* :func:`pod_env` (the environment of a pod, in upstream's order),
  :class:`InitContainerTemplate` (the workers' init container);
* :func:`desired_hpa` and :func:`hpa_changed` (the elastic job's HorizontalPodAutoscaler);
* :func:`update_pytorchjob_status` (the PyTorchJob status rules);
* :mod:`mpi_controller.pytorch.constants` (names, replica types, defaults).

The pods and Services are built by the engine's training-operator part
(:mod:`mpi_controller.engine.training`) with this kind's hooks; :mod:`.hooks` holds its hooks on
the engine (internal).
"""

from mpi_controller.pytorch import constants
from mpi_controller.pytorch.children import initial_children
from mpi_controller.pytorch.envvars import pod_env
from mpi_controller.pytorch.hpa import desired_hpa, hpa_changed
from mpi_controller.pytorch.initcontainer import InitContainerTemplate
from mpi_controller.pytorch.status import update_pytorchjob_status
from mpi_controller.pytorch.v1 import (
    ElasticPolicy,
    PyTorchJob,
    parse_pytorchjob,
    set_defaults,
    validate,
    validate_update,
    validation_warnings,
)

__all__ = [
    "ElasticPolicy",
    "InitContainerTemplate",
    "PyTorchJob",
    "constants",
    "desired_hpa",
    "hpa_changed",
    "initial_children",
    "parse_pytorchjob",
    "pod_env",
    "set_defaults",
    "update_pytorchjob_status",
    "validate",
    "validate_update",
    "validation_warnings",
]
