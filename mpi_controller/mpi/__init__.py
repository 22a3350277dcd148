"""The MPIJob kind: its API versions, the pure builders of every child object, the status,
and the kind's sync on the job engine.

Public (importable by other controllers; plain dicts in, plain dicts out, no I/O):

* the API: :func:`set_defaults`, :func:`validate`, :func:`parse_mpi_job` (``v2beta1``);
* :func:`initial_children`: everything the first sync of a job creates, in
  :data:`CREATION_ORDER` (as every kind's package has);
* builders of what a sync creates, in :data:`CREATION_ORDER`: :func:`new_job_service`,
  :func:`desired_config_map` (hostfile and ``discover_hosts.sh``), :func:`new_ssh_auth_secret`,
  :func:`new_pod_group`, :func:`new_worker`, :func:`new_launcher_job`;
* the status: :func:`mark_created`, :func:`mark_started`, :func:`update_mpi_job_status`
  (returns a :class:`StatusUpdate`: the new status and the :class:`Event` values to record);
* :mod:`mpi_controller.mpi.constants` (names, labels, reasons).

Everything else in this package (the modules' other functions, the kind on the engine:
:mod:`.kind` and the reconciles) is internal.
"""

from mpi_controller.kube.events import Event
from mpi_controller.mpi import constants
from mpi_controller.mpi.children import CREATION_ORDER, initial_children
from mpi_controller.mpi.configmap import desired_config_map
from mpi_controller.mpi.gang import new_pod_group
from mpi_controller.mpi.launcher import new_launcher_job
from mpi_controller.mpi.secret import new_ssh_auth_secret
from mpi_controller.mpi.service import new_job_service
from mpi_controller.mpi.status import (
    StatusUpdate,
    mark_created,
    mark_started,
    update_mpi_job_status,
)
from mpi_controller.mpi.v2beta1 import parse_mpi_job, set_defaults, validate
from mpi_controller.mpi.worker import new_worker

__all__ = [
    "CREATION_ORDER",
    "Event",
    "StatusUpdate",
    "constants",
    "desired_config_map",
    "initial_children",
    "mark_created",
    "mark_started",
    "new_job_service",
    "new_launcher_job",
    "new_pod_group",
    "new_ssh_auth_secret",
    "new_worker",
    "parse_mpi_job",
    "set_defaults",
    "update_mpi_job_status",
    "validate",
]
