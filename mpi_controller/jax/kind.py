"""The JAXJob kind on the job engine: training-operator v1.9's ``JAXJobReconciler`` as a
:class:`~mpi_controller.engine.training.framework.TrainingFramework` (:class:`JAX`, its hooks)
and :class:`JAXJobKind` (the engine's generic training-operator kind with them).

Hooks: the ``v1`` defaults and validation; as the cluster spec the coordinator environment of
:mod:`.envvars` in every container; the master role (every pod of index 0: worker 0, which
hosts the coordinator); the JAXJob status rules of :mod:`.status`; the default container
``jax`` (its ports are the Services', its exit code decides restarts); ``SuccessfulDeletePod``
/ ``FailedDeletePod`` events when ``ttlSecondsAfterFinished`` deletes a job (upstream's
reasons). No companions.

:class:`JAXJobKind` differs from the generic kind in one thing: upstream's JAXJob controller
never asks ``ManagedByExternalController``, so a JAXJob is reconciled whatever its
``runPolicy.managedBy`` says (``kueue.x-k8s.io/multikueue`` included), where the other kinds
leave such a job to MultiKueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import ReplicaSpec
from mpi_controller.engine.training.env import add_pod_env
from mpi_controller.engine.training.framework import Companion
from mpi_controller.engine.training.kind import TrainingJobKind
from mpi_controller.jax import constants
from mpi_controller.jax.envvars import pod_env
from mpi_controller.jax.status import update_jaxjob_status
from mpi_controller.jax.v1 import JAXJob, parse_jaxjob, set_defaults, validate
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError

__all__ = ["JAX", "JAXJobKind", "is_master_role"]

Obj = dict[str, Any]


def is_master_role(index: int) -> bool:
    """``IsMasterRole``: the pod of index 0 of any replica type (only Worker is valid)."""
    return index == 0


class JAX:
    """The JAXJob kind's hooks."""

    kind = constants.KIND
    plural = constants.PLURAL
    controller_name = constants.CONTROLLER_NAME
    framework_name = constants.FRAMEWORK_NAME
    replica_specs_field = constants.SPECS_FIELD
    default_container_name = constants.DEFAULT_CONTAINER_NAME
    delete_job_reasons = constants.DELETE_JOB_REASONS
    companions: tuple[Companion, ...] = ()

    def __init__(self) -> None:
        self._last: tuple[Mapping[str, Any], JAXJob] | None = None

    def _view(self, job: Mapping[str, Any]) -> JAXJob:
        """The typed view of ``job``, kept for the next call with the same job object (a sync
        builds all of a job's pods from one)."""
        if self._last is None or self._last[0] is not job:
            self._last = (job, parse_jaxjob(job))
        return self._last[1]

    def set_defaults(self, job: Mapping[str, Any]) -> Obj:
        return set_defaults(job)

    def validate(self, job: Mapping[str, Any]) -> list[FieldError]:
        return validate(job)

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        add_pod_env(template, pod_env(self._view(job), rtype, index))

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        return is_master_role(index)

    def update_job_status(self, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                          status: Obj, *, pods: list[Obj], now: datetime) -> list[Event]:
        return update_jaxjob_status(self._view(job), status, pods=pods, now=now)


class JAXJobKind(TrainingJobKind):
    """The JAXJob kind (``kubeflow.org/v1`` ``jaxjobs``) on the engine: the generic kind with
    :class:`JAX`'s hooks, reconciling every job whatever its ``runPolicy.managedBy``."""

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return False
