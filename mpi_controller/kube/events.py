"""Kubernetes Events as data: what a controller should record on an object.

Pure code returns :class:`Event` values; the controller sends them with its
:class:`~mpi_controller.runtime.events.EventRecorder`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NORMAL", "WARNING", "Event"]

NORMAL = "Normal"
WARNING = "Warning"


@dataclass(frozen=True)
class Event:
    """One event to record: ``type`` is ``Normal`` or ``Warning``."""

    type: str
    reason: str
    message: str
