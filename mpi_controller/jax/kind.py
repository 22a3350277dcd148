"""The JAXJob kind on the job engine: :class:`JAXJobKind`, the engine's generic training-operator
kind with :class:`~mpi_controller.jax.hooks.JAX`'s hooks.

It differs from the generic kind in one thing: upstream's JAXJob controller never asks
``ManagedByExternalController``, so a JAXJob is reconciled whatever its
``runPolicy.managedBy`` says (``kueue.x-k8s.io/multikueue`` included), where the other kinds
leave such a job to MultiKueue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.engine.training.kind import TrainingJobKind

__all__ = ["JAXJobKind"]


class JAXJobKind(TrainingJobKind):
    """The JAXJob kind (``kubeflow.org/v1`` ``jaxjobs``) on the engine: the generic kind with
    :class:`~mpi_controller.jax.hooks.JAX`'s hooks, reconciling every job whatever its
    ``runPolicy.managedBy``."""

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return False
