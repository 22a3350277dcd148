"""The JAXJob kind (``kubeflow.org/v1``, training-operator v1.9): its API, the coordinator
environment, status rules, and the kind on the job engine.

Public (importable by other controllers; plain dicts in, plain dicts out, no I/O):

* :func:`initial_children`: everything the first sync of a job creates (its pods and
  Services, a PodGroup with gang scheduling), in creation order;
* the API: :func:`set_defaults`, :func:`validate`, :func:`validate_update` (upstream's webhook
  checks and messages), :func:`parse_jaxjob` (:class:`JAXJob`);
* :func:`pod_env` (the environment of a pod, in upstream's order);
* :func:`update_jaxjob_status` (the JAXJob status rules);
* :mod:`mpi_controller.jax.constants` (names, the replica type, defaults).

The pods and Services are built by the engine's training-operator part
(:mod:`mpi_controller.engine.training`) with this kind's hooks; :mod:`.hooks` holds its hooks on
the engine (internal).
"""

from mpi_controller.jax import constants
from mpi_controller.jax.children import initial_children
from mpi_controller.jax.envvars import pod_env
from mpi_controller.jax.status import update_jaxjob_status
from mpi_controller.jax.v1 import JAXJob, parse_jaxjob, set_defaults, validate, validate_update

__all__ = [
    "JAXJob",
    "constants",
    "initial_children",
    "parse_jaxjob",
    "pod_env",
    "set_defaults",
    "update_jaxjob_status",
    "validate",
    "validate_update",
]
