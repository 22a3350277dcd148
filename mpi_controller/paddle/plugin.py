"""The PaddleJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`): the
training-operator kind of :class:`~mpi_controller.paddle.hooks.Paddle`'s hooks. It has no flags
of its own, no admission warnings and no objects beyond pods and Services."""

from __future__ import annotations

from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.plugin import training_plugin
from mpi_controller.paddle.children import initial_children
from mpi_controller.paddle.crd import PADDLEJOB
from mpi_controller.paddle.hooks import Paddle
from mpi_controller.paddle.v1 import validate, validate_update

__all__ = ["PLUGIN"]


def _framework(training: TrainingOptions, options: object) -> Paddle:
    return Paddle()


PLUGIN = training_plugin(
    framework=_framework, initial_children=initial_children, crd=PADDLEJOB, validate=validate,
    validate_update=validate_update,
    examples=("examples/paddlepaddle/simple-cpu.yaml", "examples/paddlepaddle/simple-gpu.yaml"))
