"""The PaddleJob kind (``kubeflow.org/v1``, training-operator v1.9): its API, the PADDLE_*
environment, status rules, and its hooks on the job engine.

A PaddleJob runs in **collective** mode (Workers alone; worker 0 is the rendezvous) or in
**parameter-server** mode (a Master, the servers, beside the Workers, the trainers; master 0 is
the rendezvous).

Public (importable by other controllers; plain dicts in, plain dicts out, no I/O):

* :func:`initial_children`: everything the first sync of a job creates (its pods and
  Services, a PodGroup with gang scheduling), in creation order;
* the API: :func:`set_defaults`, :func:`validate`, :func:`validate_update` (upstream's webhook
  checks and messages), :func:`parse_paddlejob` (:class:`PaddleJob`, :class:`ElasticPolicy`);
* :func:`pod_env` (the environment of a pod, in upstream's order);
* :func:`is_master_role` (which pods get ``training.kubeflow.org/job-role: master``);
* :func:`update_paddlejob_status` (the PaddleJob status rules);
* :mod:`mpi_controller.paddle.constants` (names, replica types, defaults).

The pods and Services are built by the engine's training-operator part
(:mod:`mpi_controller.engine.training`) with this kind's hooks; :mod:`.hooks` holds the hooks it
runs (internal) and :mod:`.plugin` the kind's description for the registry.
"""

from mpi_controller.paddle import constants
from mpi_controller.paddle.children import initial_children
from mpi_controller.paddle.envvars import pod_env
from mpi_controller.paddle.status import update_paddlejob_status
from mpi_controller.paddle.v1 import (
    ElasticPolicy,
    PaddleJob,
    is_master_role,
    parse_paddlejob,
    set_defaults,
    validate,
    validate_update,
)

__all__ = [
    "ElasticPolicy",
    "PaddleJob",
    "constants",
    "initial_children",
    "is_master_role",
    "parse_paddlejob",
    "pod_env",
    "set_defaults",
    "update_paddlejob_status",
    "validate",
    "validate_update",
]
