"""The JAXJob kind's hooks on the job engine: training-operator v1.9's ``JAXJobReconciler`` as a
:class:`~mpi_controller.engine.training.framework.TrainingFramework` (:class:`JAX`), which
:class:`~mpi_controller.jax.kind.JAXJobKind` runs.

Hooks: the ``v1`` defaults and validation; as the cluster spec the coordinator environment of
:mod:`.envvars` in every container; the master role (every pod of index 0: worker 0, which
hosts the coordinator); the JAXJob status rules of :mod:`.status`; the names of
:mod:`.constants`: the default container ``jax`` (its ports are the Services', its exit code
decides restarts), ``SuccessfulDeletePod`` / ``FailedDeletePod`` events when
``ttlSecondsAfterFinished`` deletes a job (upstream's reasons). No companions. The engine's
:class:`~mpi_controller.engine.training.hooks.TrainingHooks` runs them.
"""

from __future__ import annotations

from mpi_controller.engine.training.hooks import TrainingHooks
from mpi_controller.jax import constants
from mpi_controller.jax.envvars import pod_env
from mpi_controller.jax.status import update_jaxjob_status
from mpi_controller.jax.v1 import JAXJob, parse_jaxjob, set_defaults, validate

__all__ = ["JAX", "is_master_role"]


def is_master_role(index: int) -> bool:
    """``IsMasterRole``: the pod of index 0 of any replica type (only Worker is valid)."""
    return index == 0


class JAX(TrainingHooks[JAXJob]):
    """The JAXJob kind's hooks: the engine's with the JAXJob functions."""

    def __init__(self) -> None:
        super().__init__(constants, parse=parse_jaxjob, set_defaults=set_defaults,
                         validate=validate, pod_env=pod_env,
                         is_master_role=lambda specs, rtype, index: is_master_role(index),
                         update_status=update_jaxjob_status)

