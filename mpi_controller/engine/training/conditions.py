"""Job conditions of the ``kubeflow.org/v1`` kinds (training-operator ``pkg/util/status.go``).

:func:`set_condition` is upstream's ``UpdateJobConditions``/``setCondition`` on a status dict
(changed in place):

* nothing changes once the job has ``Failed=True`` (terminal);
* nothing changes when a condition of the type already has the same status and reason;
* ``lastTransitionTime`` is kept when the status is unchanged (a new reason or message);
* the new condition goes last (the CRD's ``State`` column prints the last one); adding
  ``Restarting`` removes ``Running`` and adding ``Running`` removes ``Restarting``; adding
  ``Failed`` or ``Succeeded`` turns an existing ``Running`` condition to ``False`` (its reason,
  message and times unchanged).

Reasons are ``<Kind><X>`` (:func:`reason`), e.g. ``TFJobRunning``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import (
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_RUNNING,
    CONDITION_SUCCEEDED,
    CONDITION_SUSPENDED,
)
from mpi_controller.kube.conditions import (
    conditions_of,
    get_condition,
    has_condition,
    new_condition,
)

__all__ = [
    "is_failed",
    "is_finished",
    "is_running",
    "is_succeeded",
    "is_suspended",
    "reason",
    "set_condition",
]


def reason(kind: str, what: str) -> str:
    """``NewReason(kind, what)``: e.g. ``TFJob`` + ``Running``."""
    return f"{kind}{what}"


def is_succeeded(status: Mapping[str, Any]) -> bool:
    return has_condition(status, CONDITION_SUCCEEDED)


def is_failed(status: Mapping[str, Any]) -> bool:
    return has_condition(status, CONDITION_FAILED)


def is_finished(status: Mapping[str, Any]) -> bool:
    """Succeeded or Failed."""
    return is_succeeded(status) or is_failed(status)


def is_running(status: Mapping[str, Any]) -> bool:
    return has_condition(status, CONDITION_RUNNING)


def is_suspended(status: Mapping[str, Any]) -> bool:
    return has_condition(status, CONDITION_SUSPENDED)


def _replaces(new_type: str, old_type: str) -> bool:
    pair = {new_type, old_type}
    return new_type == old_type or pair == {CONDITION_RUNNING, CONDITION_RESTARTING}


def set_condition(status: dict[str, Any], condition_type: str, condition_status: str,
                  why: str, message: str, *, now: datetime) -> bool:
    """Add or replace a condition by the rules in the module doc; True if anything changed."""
    if is_failed(status):
        return False
    current = get_condition(status, condition_type)
    if current is not None and current.get("status") == condition_status \
            and current.get("reason") == why:
        return False
    condition = new_condition(condition_type, condition_status, why, message, now=now)
    if current is not None and current.get("status") == condition_status \
            and "lastTransitionTime" in current:
        condition["lastTransitionTime"] = current["lastTransitionTime"]
    kept: list[dict[str, Any]] = []
    for cond in conditions_of(status):
        if _replaces(condition_type, str(cond.get("type"))):
            continue
        if condition_type in (CONDITION_FAILED, CONDITION_SUCCEEDED) \
                and cond.get("type") == CONDITION_RUNNING:
            cond = {**cond, "status": "False"}
        kept.append(cond)
    status["conditions"] = [*kept, condition]
    return True
