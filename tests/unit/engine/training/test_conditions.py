"""training-operator's setCondition rules (pkg/util/status.go), on status dicts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from mpi_controller.engine.training.conditions import (
    is_finished,
    reason,
    set_condition,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 1, 0, 1, tzinfo=UTC)


def summary(status: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["lastTransitionTime"])
            for c in status["conditions"]]


def test_reason_is_kind_then_what() -> None:
    assert reason("TFJob", "Running") == "TFJobRunning"


def test_a_new_condition_goes_last_with_both_times_now() -> None:
    status: dict[str, Any] = {}
    assert set_condition(status, "Created", "True", "TFJobCreated", "m", now=T0)
    assert status["conditions"] == [{"type": "Created", "status": "True",
                                     "reason": "TFJobCreated", "message": "m",
                                     "lastUpdateTime": "2026-01-01T00:00:00Z",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]


def test_same_status_and_reason_is_a_no_op() -> None:
    status: dict[str, Any] = {}
    set_condition(status, "Running", "True", "R", "one", now=T0)
    assert not set_condition(status, "Running", "True", "R", "two", now=T1)
    assert status["conditions"][0]["message"] == "one"


def test_a_new_reason_keeps_the_transition_time_and_moves_last() -> None:
    status: dict[str, Any] = {}
    set_condition(status, "Suspended", "True", "S", "m", now=T0)
    set_condition(status, "Created", "True", "C", "m", now=T0)
    set_condition(status, "Suspended", "True", "S2", "m2", now=T1)
    assert summary(status) == [("Created", "True", "C", "2026-01-01T00:00:00Z"),
                               ("Suspended", "True", "S2", "2026-01-01T00:00:00Z")]
    assert status["conditions"][1]["lastUpdateTime"] == "2026-01-01T00:01:00Z"


def test_restarting_and_running_replace_each_other() -> None:
    status: dict[str, Any] = {}
    set_condition(status, "Running", "True", "R", "m", now=T0)
    set_condition(status, "Restarting", "True", "X", "m", now=T1)
    assert [c["type"] for c in status["conditions"]] == ["Restarting"]
    set_condition(status, "Running", "True", "R", "m", now=T1)
    assert [c["type"] for c in status["conditions"]] == ["Running"]


def test_finishing_turns_running_false_and_failed_is_terminal() -> None:
    status: dict[str, Any] = {}
    set_condition(status, "Running", "True", "R", "m", now=T0)
    set_condition(status, "Failed", "True", "F", "m", now=T1)
    assert summary(status) == [("Running", "False", "R", "2026-01-01T00:00:00Z"),
                               ("Failed", "True", "F", "2026-01-01T00:01:00Z")]
    assert is_finished(status)
    assert not set_condition(status, "Succeeded", "True", "S", "m", now=T1)
    assert not set_condition(status, "Running", "True", "R2", "m", now=T1)
    assert len(status["conditions"]) == 2


def test_succeeded_after_running() -> None:
    status: dict[str, Any] = {}
    set_condition(status, "Created", "True", "C", "m", now=T0)
    set_condition(status, "Running", "True", "R", "m", now=T0)
    set_condition(status, "Succeeded", "True", "S", "m", now=T1)
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [
        ("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    assert is_finished(status)
