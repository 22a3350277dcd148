"""Status conditions (``metav1.Condition``-like entries of ``status.conditions``), read-only.

How a kind *sets* a condition (which conditions a new one replaces or flips) differs between
the operators, so that lives with each kind; these are the shared readers and the builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.kube.jsonvalue import as_list
from mpi_controller.kube.timefmt import format_time

__all__ = ["PHASES", "conditions_of", "get_condition", "has_condition", "new_condition",
           "phase_of"]


def new_condition(
    condition_type: str, status: str, reason: str, message: str, *, now: datetime
) -> dict[str, Any]:
    """A condition with ``lastUpdateTime`` and ``lastTransitionTime`` both ``now``."""
    stamp = format_time(now)
    return {
        "type": condition_type,
        "status": status,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
        "reason": reason,
        "message": message,
    }


def conditions_of(status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The well-formed entries of ``status.conditions`` (the same dicts, not copies)."""
    return [cond for cond in as_list(status.get("conditions")) if isinstance(cond, dict)]


def get_condition(status: Mapping[str, Any], condition_type: str) -> dict[str, Any] | None:
    """The first condition of ``condition_type``, or ``None``."""
    for cond in as_list(status.get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == condition_type:
            return cond
    return None


def has_condition(status: Mapping[str, Any], condition_type: str) -> bool:
    """True if a condition of ``condition_type`` has status ``"True"``."""
    for cond in as_list(status.get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == condition_type \
                and cond.get("status") == "True":
            return True
    return False


PHASES = ("Succeeded", "Failed", "Suspended", "Restarting", "Running", "Created")
"""The job conditions that name a phase, the one that wins first (Kubeflow's job conditions)."""


def phase_of(status: Mapping[str, Any]) -> str:
    """The job's phase: the first of :data:`PHASES` whose condition is True, else ``""``."""
    for phase in PHASES:
        cond = get_condition(status, phase)
        if cond is not None and cond.get("status") == "True":
            return phase
    return ""
