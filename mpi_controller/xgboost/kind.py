"""The XGBoostJob kind's hooks on the job engine: training-operator v1.9's
``XGBoostJobReconciler`` as a :class:`~mpi_controller.engine.training.framework.TrainingFramework`
(the engine's generic :class:`~mpi_controller.engine.training.kind.TrainingJobKind` runs it).

Hooks: the ``v1`` defaults and validation; as the cluster spec the environment of
:mod:`.envvars` in every container; the master role on the Master's pods only (no fallback to
worker 0: a job without a Master is invalid); the XGBoostJob status rules of :mod:`.status`;
the default container ``xgboost`` (Service ports, exit codes); ``SuccessfulDeleteJob`` /
``FailedDeleteJob`` events when ``ttlSecondsAfterFinished`` deletes a job; no companions.
Pure, like the rest of the package: the engine does the I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec
from mpi_controller.engine.training.env import add_pod_env
from mpi_controller.engine.training.framework import Companion
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.xgboost import constants
from mpi_controller.xgboost.envvars import pod_env
from mpi_controller.xgboost.status import update_xgboostjob_status
from mpi_controller.xgboost.v1 import XGBoostJob, parse_xgboostjob, set_defaults, validate

__all__ = ["XGBoost", "is_master_role"]

Obj = dict[str, Any]


def is_master_role(rtype: str) -> bool:
    """``IsMasterRole``: the pods of the Master type (any index), whatever else the job has."""
    return rtype == constants.REPLICA_TYPE_MASTER


class XGBoost:
    """The XGBoostJob kind's hooks."""

    kind = constants.KIND
    plural = constants.PLURAL
    controller_name = constants.CONTROLLER_NAME
    framework_name = constants.FRAMEWORK_NAME
    replica_specs_field = constants.SPECS_FIELD
    default_container_name = constants.DEFAULT_CONTAINER_NAME
    delete_job_reasons = ("SuccessfulDeleteJob", "FailedDeleteJob")
    companions: tuple[Companion, ...] = ()

    def __init__(self) -> None:
        self._last: tuple[Mapping[str, Any], XGBoostJob] | None = None

    def _view(self, job: Mapping[str, Any]) -> XGBoostJob:
        """The typed view of ``job``, kept for the next call with the same job object (a sync
        builds all of a job's pods from one)."""
        if self._last is None or self._last[0] is not job:
            self._last = (job, parse_xgboostjob(job))
        return self._last[1]

    def set_defaults(self, job: Mapping[str, Any]) -> Obj:
        return set_defaults(job)

    def validate(self, job: Mapping[str, Any]) -> list[FieldError]:
        return validate(job)

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        add_pod_env(template, pod_env(self._view(job), rtype, index))

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        return is_master_role(rtype)

    def update_job_status(self, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                          status: Obj, *, pods: list[Obj], now: datetime) -> list[Event]:
        return update_xgboostjob_status(parse_xgboostjob(job), status, pods=pods, now=now)
