"""Kubernetes Events as data: what a controller should record on an object.

Pure code returns :class:`Event` values; the controller sends them with its
:class:`~mpi_controller.runtime.events.EventRecorder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NORMAL", "WARNING", "Event"]

NORMAL = "Normal"
WARNING = "Warning"


@dataclass(frozen=True)
class Event:
    """One event to record: ``type`` is ``Normal`` or ``Warning``.

    ``terminal`` marks the event of a job's end (Succeeded, Failed), which the recorder never
    drops (its queue keeps it even when full). It says how to deliver the event, not what the
    event is: it takes no part in equality."""

    type: str
    reason: str
    message: str
    terminal: bool = field(default=False, compare=False)
