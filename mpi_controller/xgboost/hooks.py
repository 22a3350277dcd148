"""The XGBoostJob kind's hooks on the job engine: training-operator v1.9's
``XGBoostJobReconciler`` as a :class:`~mpi_controller.engine.training.framework.TrainingFramework`
(the engine's generic :class:`~mpi_controller.engine.training.kind.TrainingJobKind` runs it).

Hooks: the ``v1`` defaults and validation; as the cluster spec the environment of
:mod:`.envvars` in every container; the master role on the Master's pods only (no fallback to
worker 0: a job without a Master is invalid); the XGBoostJob status rules of :mod:`.status`;
the names of :mod:`.constants`: the default container ``xgboost`` (Service ports, exit codes),
``SuccessfulDeleteJob`` / ``FailedDeleteJob`` events when ``ttlSecondsAfterFinished`` deletes a
job; no companions. The engine's :class:`~mpi_controller.engine.training.hooks.TrainingHooks`
runs them. Pure, like the rest of the package: the engine does the I/O.
"""

from __future__ import annotations

from mpi_controller.engine.training.hooks import TrainingHooks, a_master_decides
from mpi_controller.xgboost import constants
from mpi_controller.xgboost.envvars import pod_env
from mpi_controller.xgboost.status import update_xgboostjob_status
from mpi_controller.xgboost.v1 import XGBoostJob, parse_xgboostjob, set_defaults, validate

__all__ = ["XGBoost", "is_master_role"]


def is_master_role(rtype: str) -> bool:
    """``IsMasterRole``: the pods of the Master type (any index), whatever else the job has."""
    return rtype == constants.REPLICA_TYPE_MASTER


class XGBoost(TrainingHooks[XGBoostJob]):
    """The XGBoostJob kind's hooks: the engine's with the XGBoostJob functions."""

    def __init__(self) -> None:
        super().__init__(constants, parse=parse_xgboostjob, set_defaults=set_defaults,
                         validate=validate, pod_env=pod_env,
                         is_master_role=lambda specs, rtype, index: is_master_role(rtype),
                         update_status=update_xgboostjob_status,
                         master_decides=a_master_decides)
