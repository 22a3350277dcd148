"""The PaddleJob kind's hooks on the job engine: training-operator v1.9's
``PaddleJobReconciler`` as a :class:`~mpi_controller.engine.training.framework.TrainingFramework`
(:class:`Paddle`), which the engine's generic training-operator kind runs.

Hooks: the ``v1`` defaults and validation; as the cluster spec the environment of
:mod:`.envvars` in every container; the master role (the Master pods, every index; a job of
workers alone has no pod with it); the PaddleJob status rules of :mod:`.status`; the names of
:mod:`.constants`: the default container ``paddle`` (its ports are the Services', its exit code
decides restarts), ``SuccessfulDeletePod`` / ``FailedDeletePod`` events when
``ttlSecondsAfterFinished`` deletes a job (upstream's reasons). No companions:
``elasticPolicy.metrics`` makes no autoscaler. The engine's
:class:`~mpi_controller.engine.training.hooks.TrainingHooks` runs them.
"""

from __future__ import annotations

from mpi_controller.engine.training.hooks import TrainingHooks, a_master_decides
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


class Paddle(TrainingHooks[PaddleJob]):
    """The PaddleJob kind's hooks: the engine's with the PaddleJob functions."""

    def __init__(self) -> None:
        super().__init__(constants, parse=parse_paddlejob, set_defaults=set_defaults,
                         validate=validate, pod_env=pod_env,
                         is_master_role=lambda specs, rtype, index: is_master_role(rtype),
                         update_status=update_paddlejob_status,
                         master_decides=a_master_decides)
