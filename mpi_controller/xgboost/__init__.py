"""The XGBoostJob kind (``kubeflow.org/v1``, training-operator v1.9; XGBoost's Rabit tracker or
LightGBM): its API, the environment of its pods, status rules, and the kind's hooks on the job
engine.

Public (importable by other controllers; plain dicts in, plain dicts out, no I/O):

* :func:`initial_children`: everything the first sync of a job creates (its pods and
  Services, a PodGroup with gang scheduling), in creation order;
* the API: :func:`set_defaults`, :func:`validate`, :func:`validate_update` (upstream's webhook
  checks and messages), :func:`parse_xgboostjob` (:class:`XGBoostJob`);
* :func:`pod_env` (the environment of a pod, in upstream's order);
* :func:`is_master_role` (which pods carry ``training.kubeflow.org/job-role: master``);
* :func:`update_xgboostjob_status` (the XGBoostJob status rules);
* :mod:`mpi_controller.xgboost.constants` (names, replica types, defaults).

The pods and Services are built by the engine's training-operator part
(:mod:`mpi_controller.engine.training`) with this kind's hooks; :mod:`.hooks` holds the hooks it
runs the kind with, :mod:`.crd` the CRD and :mod:`.plugin` the kind's registry entry.
"""

from mpi_controller.xgboost import constants
from mpi_controller.xgboost.children import initial_children
from mpi_controller.xgboost.envvars import pod_env
from mpi_controller.xgboost.hooks import is_master_role
from mpi_controller.xgboost.status import update_xgboostjob_status
from mpi_controller.xgboost.v1 import (
    XGBoostJob,
    parse_xgboostjob,
    set_defaults,
    validate,
    validate_update,
)

__all__ = [
    "XGBoostJob",
    "constants",
    "initial_children",
    "is_master_role",
    "parse_xgboostjob",
    "pod_env",
    "set_defaults",
    "update_xgboostjob_status",
    "validate",
    "validate_update",
]
