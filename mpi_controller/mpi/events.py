"""Kubernetes Events as data: what the controller should record on the MPIJob.

Pure functions return :class:`Event` values; the controller sends them with its recorder
(component ``mpi-job-controller``). Message texts are upstream's (mpi-operator v0.8.2
``pkg/controller/mpi_job_controller.go``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpi_controller.kube import owners
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError, aggregate_message
from mpi_controller.kube.text import truncate_message
from mpi_controller.mpi import constants

__all__ = [
    "Event",
    "job_deleted_event",
    "launcher_create_failed_event",
    "not_controlled_event",
    "resource_exists_message",
    "validation_error_event",
    "worker_create_failed_event",
]

def resource_exists_message(obj: Mapping[str, Any], kind: str = "") -> str:
    """``Resource "<name>" of Kind "<kind>" already exists and is not managed by MPIJob``."""
    return owners.resource_exists_message(obj, kind=kind, owner_kind=constants.KIND)


def validation_error_event(errors: Sequence[FieldError]) -> Event:
    """Warning ``ValidationError``: ``Found validation errors: <aggregate>`` (truncated)."""
    text = truncate_message(f"Found validation errors: {aggregate_message(errors)}")
    return Event(constants.EVENT_TYPE_WARNING, constants.EVENT_VALIDATION_ERROR, text)


def not_controlled_event(obj: Mapping[str, Any], kind: str = "") -> Event:
    """Warning ``ErrResourceExists`` naming ``obj`` and its kind."""
    return Event(
        constants.EVENT_TYPE_WARNING, constants.EVENT_ERR_RESOURCE_EXISTS,
        resource_exists_message(obj, kind),
    )


def launcher_create_failed_event(error: str) -> Event:
    """Warning ``MPIJobFailed`` ``launcher pod created failed: <err>`` (``error``: Go's text
    of the failure, :func:`~mpi_controller.runtime.errors.go_error_text`)."""
    return Event(
        constants.EVENT_TYPE_WARNING, constants.EVENT_MPIJOB_FAILED,
        f"launcher pod created failed: {error}",
    )


def worker_create_failed_event(error: str) -> Event:
    """Warning ``MPIJobFailed`` ``worker pod created failed: <err>`` (``error`` as above)."""
    return Event(constants.EVENT_TYPE_WARNING, constants.EVENT_MPIJOB_FAILED,
                 f"worker pod created failed: {error}")


def job_deleted_event(name: str) -> Event:
    """Normal ``SuccessfulDeleteJob`` ``Deleted job: <name>`` (the training-operator's event when
    a TTL deletes a job; recorded by the ``mpi-controller.io/ttl-deletes: MPIJob`` opt-in)."""
    return Event(constants.EVENT_TYPE_NORMAL, "SuccessfulDeleteJob", f"Deleted job: {name}")
