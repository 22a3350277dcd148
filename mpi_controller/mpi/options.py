"""What every generation of the MPIJob kind shares on the engine: the resource it reads and
writes (:data:`MPIJOBS`, the stored version ``kubeflow.org/v2beta1``) and the kind's settings
(:class:`MPIJobOptions`, from ``mpi-controller run``'s flags). Pure."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpi_controller.kube.resources import Resource
from mpi_controller.mpi import constants
from mpi_controller.mpi.features import Features
from mpi_controller.mpi.v1.launch import DEFAULT_KUBECTL_DELIVERY_IMAGE as V1_DELIVERY_IMAGE
from mpi_controller.mpi.v1alpha2.launch import (
    DEFAULT_KUBECTL_DELIVERY_IMAGE as V1ALPHA2_DELIVERY_IMAGE,
)

__all__ = ["MPIJOBS", "MPIJobOptions"]

MPIJOBS = Resource(constants.GROUP, constants.VERSION, constants.PLURAL, namespaced=True,
                   kind=constants.KIND)
"""Every MPIJob, whatever version it was created in, as stored: ``kubeflow.org/v2beta1``."""


@dataclass(frozen=True)
class MPIJobOptions:
    """The MPIJob kind's settings (``mpi-controller run`` flags of the Go operator)."""

    gang_scheduling: str = ""
    cluster_domain: str = ""
    worker_create_concurrency: int = 16
    features: Features = field(default_factory=Features)
    """The feature gates (``--feature-gates``; all off: the Go operator's behaviour)."""
    kubectl_delivery_image_v1: str = V1_DELIVERY_IMAGE
    """The ``v1`` launcher's init container (``--mpi-kubectl-delivery-image``)."""
    kubectl_delivery_image_v1alpha2: str = V1ALPHA2_DELIVERY_IMAGE
    """The ``v1alpha2`` launcher's init container (``--kubectl-delivery-image``)."""
