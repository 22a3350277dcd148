"""The resources the TrainJob kind reads and writes, and the names it reports as: what the kind
registry's entry (:mod:`.plugin`) needs without the kind itself (:mod:`.kind`, which the
engine builds only when ``--enable-scheme trainjob`` names it)."""

from __future__ import annotations

from mpi_controller.kube.resources import Resource
from mpi_controller.trainjob import constants

__all__ = ["CLUSTER_RUNTIMES", "CONTROLLER_NAME", "EVENT_COMPONENT", "JOBSETS", "RUNTIMES",
           "TRAINJOBS"]

TRAINJOBS = Resource(constants.GROUP, constants.VERSION, constants.PLURAL, True, constants.KIND)
RUNTIMES = Resource(constants.GROUP, constants.VERSION, constants.RUNTIME_PLURAL, True,
                    constants.RUNTIME_KIND)
CLUSTER_RUNTIMES = Resource(constants.GROUP, constants.VERSION,
                            constants.CLUSTER_RUNTIME_PLURAL, False,
                            constants.CLUSTER_RUNTIME_KIND)
JOBSETS = Resource(constants.JOBSET_GROUP, constants.JOBSET_VERSION, constants.JOBSET_PLURAL,
                   True, constants.JOBSET_KIND)
CONTROLLER_NAME = "trainjob-controller"
EVENT_COMPONENT = "trainer-trainjob-controller"
"""The reporting controller of Trainer's TrainJob Events (its manager's event recorder name)."""
