"""MPIJob status conditions (upstream mpi_job_controller_status.go).

Rules of :func:`set_condition`:

* a condition of the same type with the same status *and* reason → no change (the message is
  ignored), returns False;
* same status, other reason → replaced, keeping the old ``lastTransitionTime``;
* the new condition is appended at the end, so list order is the order of last change;
* setting ``Running`` drops ``Restarting`` and vice versa; setting ``Failed`` or ``Succeeded``
  turns every kept ``Running`` and ``Failed`` condition to status ``False``.

Statuses are plain dicts (``status`` of an MPIJob). Functions named ``set_*`` change the dict
they are given (callers pass a copy); everything else is read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpi_controller.kube.conditions import (
    conditions_of,
    get_condition,
    has_condition,
    new_condition,
)
from mpi_controller.kube.jsonvalue import as_record
from mpi_controller.mpi import constants

__all__ = [
    "filter_out_condition",
    "get_condition",
    "has_condition",
    "is_failed",
    "is_finished",
    "is_succeeded",
    "new_condition",
    "set_condition",
]


def is_succeeded(status: Mapping[str, Any]) -> bool:
    return has_condition(status, constants.CONDITION_SUCCEEDED)


def is_failed(status: Mapping[str, Any]) -> bool:
    return has_condition(status, constants.CONDITION_FAILED)


def is_finished(status: Mapping[str, Any]) -> bool:
    """Succeeded or Failed is ``True``."""
    return is_succeeded(status) or is_failed(status)


def filter_out_condition(
    conditions: list[dict[str, Any]], condition_type: str
) -> list[dict[str, Any]]:
    """``conditions`` without ``condition_type`` (see the module docstring); copies entries."""
    out = []
    for cond in conditions:
        kind = cond.get("type")
        if kind == condition_type:
            continue
        if {condition_type, kind} == {constants.CONDITION_RUNNING, constants.CONDITION_RESTARTING}:
            continue
        cond = dict(cond)
        finished = (constants.CONDITION_FAILED, constants.CONDITION_SUCCEEDED)
        if condition_type in finished and kind in (
            constants.CONDITION_RUNNING,
            constants.CONDITION_FAILED,
        ):
            cond["status"] = "False"
        out.append(cond)
    return out


def set_condition(status: dict[str, Any], condition: Mapping[str, Any]) -> bool:
    """Put ``condition`` into ``status`` (in place); False when nothing changed."""
    current = get_condition(status, as_record(condition).get("type", ""))
    new = dict(condition)
    if current is not None and current.get("status") == new.get("status"):
        if current.get("reason") == new.get("reason"):
            return False
        new["lastTransitionTime"] = current.get("lastTransitionTime")
    status["conditions"] = [*filter_out_condition(conditions_of(status), new.get("type", "")), new]
    return True
