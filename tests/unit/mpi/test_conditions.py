"""Condition bookkeeping (mpi-operator v0.8.2 ``pkg/controller/mpi_job_controller_status.go``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mpi_controller.mpi.conditions import get_condition, is_finished, new_condition, set_condition

T0 = datetime(2024, 1, 1, tzinfo=UTC)
T1 = datetime(2024, 1, 2, tzinfo=UTC)


def _types(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["type"], c["status"]) for c in status["conditions"]]


def test_same_status_and_reason_is_a_no_op_even_with_another_message() -> None:
    status: dict[str, Any] = {}
    assert set_condition(status, new_condition("Created", "True", "R", "a", now=T0))
    assert not set_condition(status, new_condition("Created", "True", "R", "b", now=T1))
    assert status["conditions"][0]["message"] == "a"


def test_reason_change_keeps_transition_time() -> None:
    """Same status, new reason: replaced, lastTransitionTime kept, lastUpdateTime new."""
    status: dict[str, Any] = {}
    set_condition(status, new_condition("Running", "False", "A", "m", now=T0))
    assert set_condition(status, new_condition("Running", "False", "B", "m", now=T1))
    cond = get_condition(status, "Running")
    assert cond is not None
    assert cond["lastTransitionTime"] == "2024-01-01T00:00:00Z"
    assert cond["lastUpdateTime"] == "2024-01-02T00:00:00Z"


def test_changed_condition_moves_to_the_end() -> None:
    """setCondition appends: list order is the order of last change."""
    status: dict[str, Any] = {}
    for kind in ("Created", "Running", "Suspended"):
        set_condition(status, new_condition(kind, "True", kind, "", now=T0))
    set_condition(status, new_condition("Running", "False", "X", "", now=T1))
    assert _types(status) == [("Created", "True"), ("Suspended", "True"), ("Running", "False")]


def test_terminal_conditions_turn_running_and_failed_false() -> None:
    """filterOutCondition: setting Succeeded or Failed sets kept Running/Failed to False."""
    status: dict[str, Any] = {}
    set_condition(status, new_condition("Created", "True", "C", "", now=T0))
    set_condition(status, new_condition("Running", "True", "R", "", now=T0))
    set_condition(status, new_condition("Failed", "True", "MPIJobEvicted", "", now=T0))
    assert _types(status) == [("Created", "True"), ("Running", "False"), ("Failed", "True")]
    set_condition(status, new_condition("Succeeded", "True", "S", "", now=T1))
    assert _types(status) == [
        ("Created", "True"),
        ("Running", "False"),
        ("Failed", "False"),
        ("Succeeded", "True"),
    ]
    assert is_finished(status)


def test_running_and_restarting_exclude_each_other() -> None:
    status: dict[str, Any] = {}
    set_condition(status, new_condition("Restarting", "True", "R", "", now=T0))
    set_condition(status, new_condition("Running", "True", "R", "", now=T0))
    assert _types(status) == [("Running", "True")]
    set_condition(status, new_condition("Restarting", "True", "R", "", now=T0))
    assert _types(status) == [("Restarting", "True")]
