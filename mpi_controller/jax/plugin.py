"""The JAXJob kind's description (:class:`~mpi_controller.engine.plugin.KindPlugin`): the
training-operator kind of :class:`~mpi_controller.jax.hooks.JAX`'s hooks, built as
:class:`~mpi_controller.jax.kind.JAXJobKind` (which reconciles a job whatever its
``runPolicy.managedBy``, as upstream's JAXJob controller does). No flags of its own."""

from __future__ import annotations

from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.plugin import training_plugin
from mpi_controller.jax.children import initial_children
from mpi_controller.jax.crd import JAXJOB
from mpi_controller.jax.hooks import JAX
from mpi_controller.jax.kind import JAXJobKind
from mpi_controller.jax.v1 import validate, validate_update

__all__ = ["PLUGIN"]


def _framework(training: TrainingOptions, options: object) -> JAX:
    return JAX()


PLUGIN = training_plugin(
    framework=_framework, initial_children=initial_children, crd=JAXJOB, validate=validate,
    validate_update=validate_update,
    kind_type=JAXJobKind,
    examples=("examples/jax/demo.yaml", "examples/jax/jaxjob_dist_spmd_mnist_gloo.yaml"))
