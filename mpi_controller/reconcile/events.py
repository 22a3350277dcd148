"""Kubernetes Events as data: what the controller should record on the MPIJob.

Pure functions return :class:`Event` values; the controller sends them with its recorder
(component ``mpi-job-controller``). Message texts are upstream's (spec 3.9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mpi_controller.api import constants as c
from mpi_controller.api.errors import FieldError, aggregate_message
from mpi_controller.reconcile.ownership import resource_exists_message

__all__ = [
    "EVENT_MESSAGE_LIMIT",
    "Event",
    "launcher_create_failed_event",
    "not_controlled_event",
    "truncate_message",
    "validation_error_event",
    "worker_create_failed_event",
]

EVENT_MESSAGE_LIMIT = 1024


@dataclass(frozen=True)
class Event:
    """One event to record: ``type`` is ``Normal`` or ``Warning``."""

    type: str
    reason: str
    message: str


def truncate_message(message: str, limit: int = EVENT_MESSAGE_LIMIT) -> str:
    """Cut ``message`` to ``limit`` bytes, ending in ``...`` when cut (upstream
    ``truncateMessage``; we never split a UTF-8 sequence)."""
    raw = message.encode()
    if len(raw) <= limit:
        return message
    return raw[: limit - 3].decode(errors="ignore") + "..."


def validation_error_event(errors: Sequence[FieldError]) -> Event:
    """Warning ``ValidationError``: ``Found validation errors: <aggregate>`` (truncated)."""
    text = truncate_message(f"Found validation errors: {aggregate_message(errors)}")
    return Event(c.EVENT_TYPE_WARNING, c.EVENT_VALIDATION_ERROR, text)


def not_controlled_event(obj: Mapping[str, Any], kind: str = "") -> Event:
    """Warning ``ErrResourceExists`` naming ``obj`` and its kind."""
    return Event(
        c.EVENT_TYPE_WARNING, c.EVENT_ERR_RESOURCE_EXISTS, resource_exists_message(obj, kind)
    )


def launcher_create_failed_event(error: object) -> Event:
    """Warning ``MPIJobFailed`` ``launcher pod created failed: <err>``."""
    return Event(
        c.EVENT_TYPE_WARNING, c.EVENT_MPIJOB_FAILED, f"launcher pod created failed: {error}"
    )


def worker_create_failed_event(error: object) -> Event:
    """Warning ``MPIJobFailed`` ``worker pod created failed: <err>``."""
    return Event(c.EVENT_TYPE_WARNING, c.EVENT_MPIJOB_FAILED, f"worker pod created failed: {error}")
