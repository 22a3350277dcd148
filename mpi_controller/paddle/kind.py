"""The PaddleJob kind's hooks on the job engine: training-operator v1.9's
``PaddleJobReconciler`` as a :class:`~mpi_controller.engine.training.framework.TrainingFramework`
(:class:`Paddle`), which the engine's generic training-operator kind runs.

Hooks: the ``v1`` defaults and validation; as the cluster spec the environment of
:mod:`.envvars` in every container; the master role (the Master pods, every index; a job of
workers alone has no pod with it); the PaddleJob status rules of :mod:`.status`; the default
container ``paddle`` (its ports are the Services', its exit code decides restarts);
``SuccessfulDeletePod`` / ``FailedDeletePod`` events when ``ttlSecondsAfterFinished`` deletes a
job (upstream's reasons). No companions: ``elasticPolicy.metrics`` makes no autoscaler.
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
from mpi_controller.paddle import constants
from mpi_controller.paddle.envvars import pod_env
from mpi_controller.paddle.status import update_paddlejob_status
from mpi_controller.paddle.v1 import (
    PaddleJob,
    is_master_role,
    parse_paddlejob,
    set_defaults,
    validate,
)

__all__ = ["Paddle"]

Obj = dict[str, Any]


class Paddle:
    """The PaddleJob kind's hooks."""

    kind = constants.KIND
    plural = constants.PLURAL
    controller_name = constants.CONTROLLER_NAME
    framework_name = constants.FRAMEWORK_NAME
    replica_specs_field = constants.SPECS_FIELD
    default_container_name = constants.DEFAULT_CONTAINER_NAME
    delete_job_reasons = ("SuccessfulDeletePod", "FailedDeletePod")
    companions: tuple[Companion, ...] = ()

    def __init__(self) -> None:
        self._last: tuple[Mapping[str, Any], PaddleJob] | None = None

    def _view(self, job: Mapping[str, Any]) -> PaddleJob:
        """The typed view of ``job``, kept for the next call with the same job object (a sync
        builds all of a job's pods from one)."""
        if self._last is None or self._last[0] is not job:
            self._last = (job, parse_paddlejob(job))
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
        return update_paddlejob_status(self._view(job), status, pods=pods, now=now)
