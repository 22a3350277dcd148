"""The TFJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`): the
training-operator kind of :class:`~mpi_controller.tensorflow.hooks.TensorFlow`'s hooks, whose
``TF_CONFIG`` host names take ``--cluster-domain``."""

from __future__ import annotations

from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.plugin import training_plugin
from mpi_controller.tensorflow.children import initial_children
from mpi_controller.tensorflow.crd import TFJOB
from mpi_controller.tensorflow.hooks import TensorFlow
from mpi_controller.tensorflow.v1 import validate, validate_update

__all__ = ["PLUGIN"]


def _framework(training: TrainingOptions, options: object) -> TensorFlow:
    return TensorFlow(cluster_domain=training.cluster_domain)


PLUGIN = training_plugin(
    framework=_framework, initial_children=initial_children, crd=TFJOB, validate=validate,
    validate_update=validate_update,
    examples=("examples/tensorflow-dist-mnist.yaml",))
