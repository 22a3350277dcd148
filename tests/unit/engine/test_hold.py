"""Holding a status write whose only change is replica counts: which changes qualify, when
more pod changes are expected, and the window a held change waits in."""

from __future__ import annotations

from typing import Any

import pytest

from mpi_controller.engine.hold import (
    ChildHolds,
    StatusHold,
    only_counts_changed,
    pod_changes_expected,
)
from mpi_controller.runtime.clock import ManualClock

CREATED = [{"type": "Created", "status": "True", "reason": "TFJobCreated"}]
RUNNING = [*CREATED, {"type": "Running", "status": "True", "reason": "TFJobRunning"}]


def status(conditions: list[dict[str, Any]] = CREATED,
           **replicas: dict[str, Any]) -> dict[str, Any]:
    return {"conditions": conditions, "startTime": "2026-01-01T00:00:00Z",
            "replicaStatuses": replicas}


CONDITIONS = [{"type": "Suspended", "status": "False", "reason": "Resumed"}]


def node(name: str = "node", **counts: int) -> dict[str, Any]:
    """A TrainJob's ``jobsStatus`` entry (every count, 0 unless given)."""
    return {"name": name, **{k: counts.get(k, 0)
                             for k in ("ready", "succeeded", "failed", "active", "suspended")}}


def jobs(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"conditions": CONDITIONS, "jobsStatus": list(entries)}


@pytest.mark.parametrize(("new", "old", "expected"), [
    # counts alone, up, down, appearing, disappearing
    (status(PS={"active": 1}, Worker={}), status(PS={}, Worker={}), True),
    (status(Worker={"active": 3, "succeeded": 1}), status(Worker={"active": 4}), True),
    (status(Worker={"active": 2, "failed": 1, "selector": "s"}),
     status(Worker={"active": 3, "selector": "s"}), True),
    # nothing changed: nothing to hold (nor to write)
    (status(Worker={"active": 1}), status(Worker={"active": 1}), False),
    # a condition, with or without counts
    (status(RUNNING, Worker={"active": 1}), status(Worker={}), False),
    (status(RUNNING, Worker={}), status(Worker={}), False),
    # a time
    ({**status(Worker={"active": 1}), "completionTime": "x"}, status(Worker={}), False),
    # a selector, a replica type, a field of an entry that is not a count
    (status(Worker={"active": 1, "selector": "a"}), status(Worker={"selector": "b"}), False),
    (status(PS={}, Worker={"active": 1}), status(Worker={}), False),
    (status(Worker={"active": 1, "labelSelector": {}}), status(Worker={}), False),
    # malformed: never held
    ({"replicaStatuses": {"Worker": 3}}, {"replicaStatuses": {"Worker": 2}}, False),
    ({"replicaStatuses": {"Worker": {"active": 1}}}, {"replicaStatuses": None}, False),
    # a TrainJob's jobsStatus: counts alone, the first counts, the first with more than counts
    (jobs(node(active=1, ready=1)), jobs(node(active=1)), True),
    (jobs(node(active=1), node("init", succeeded=1)), jobs(node(), node("init", active=1)),
     True),
    (jobs(node()), {"conditions": CONDITIONS}, True),
    (jobs(node()), {"conditions": CONDITIONS, "jobsStatus": []}, True),
    ({"conditions": CONDITIONS, "jobsStatus": [{"name": "node", "x": 1}]},
     {"conditions": CONDITIONS}, False),
    # ... and what is more than counts: names, order, an entry, a condition, jobsStatus gone
    (jobs(node("other")), jobs(node()), False),
    (jobs(node("init"), node()), jobs(node(), node("init")), False),
    (jobs(node(), node("init")), jobs(node()), False),
    ({**jobs(node(succeeded=1)), "conditions": [*CONDITIONS, {"type": "Complete"}]},
     jobs(node(active=1)), False),
    ({"conditions": CONDITIONS}, jobs(node()), False),
    ({"conditions": CONDITIONS, "jobsStatus": [3]}, jobs(node()), False),
])
def test_only_counts_changed(new: dict[str, Any], old: dict[str, Any], expected: bool) -> None:
    assert only_counts_changed(new, old) is expected


def pod(phase: str, *, deleted: bool = False) -> dict[str, Any]:
    meta = {"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z"} if deleted else {"name": "p"}
    return {"metadata": meta, "status": {"phase": phase} if phase else {}}


@pytest.mark.parametrize(("phases", "expected"), [
    (["Pending", "Running"], True),                   # starting: the Pending one will run
    (["Pending"], True),
    (["Running", "Running"], False),                  # all running: nothing due
    (["Running", "Succeeded"], True),                 # ending: its peers tend to follow
    (["Failed", "Running"], True),
    (["Succeeded", "Succeeded"], False),              # all ended
    (["Succeeded", ""], False),                       # a pod without a phase yet
    ([], False),
])
def test_pod_changes_expected(phases: list[str], expected: bool) -> None:
    assert pod_changes_expected([pod(p) for p in phases]) is expected


def test_pods_being_deleted_do_not_count() -> None:
    assert not pod_changes_expected([pod("Pending", deleted=True), pod("Running")])
    assert not pod_changes_expected([pod("Succeeded", deleted=True), pod("Running")])


def test_the_window_starts_at_the_first_hold_and_does_not_restart() -> None:
    clock = ManualClock()
    hold = StatusHold(clock, 1.0)
    assert hold.remaining("ns/a") == 1.0
    clock.advance(0.25)
    assert hold.remaining("ns/a") == 0.75
    assert hold.remaining("ns/b") == 1.0          # per key
    clock.advance(0.75)
    assert hold.remaining("ns/a") == 0.0
    clock.advance(5)
    assert hold.remaining("ns/a") == 0.0          # still due until forgotten
    hold.forget("ns/a")
    assert hold.remaining("ns/a") == 1.0          # a new window


def test_a_window_of_zero_holds_nothing() -> None:
    hold = StatusHold(ManualClock(), 0.0)
    assert hold.remaining("ns/a") == 0.0


def test_a_caller_may_give_its_window_the_first_call_sets_it() -> None:
    clock = ManualClock()
    hold = StatusHold(clock, 1.0)
    assert hold.remaining("ns/a", 2.0) == 2.0
    clock.advance(1.5)
    assert hold.remaining("ns/a") == 0.5          # the window started stays
    assert hold.remaining("ns/a", 5.0) == 0.5
    assert StatusHold(clock, 0.0).remaining("ns/a", 2.0) == 0.0  # 0 configured: no hold


def test_forget_calls_on_end_only_when_a_window_was_open() -> None:
    """The engine drops the sync scheduled for a window's end once the held change is written
    (or gone): ``on_end`` names the key, once, and never for a key with no window."""
    ended: list[str] = []
    hold = StatusHold(ManualClock(), 1.0, on_end=ended.append)
    hold.forget("ns/a")
    assert ended == []
    assert hold.remaining("ns/a") == 1.0
    hold.forget("ns/a")
    hold.forget("ns/a")
    assert ended == ["ns/a"]
    off = StatusHold(ManualClock(), 0.0, on_end=ended.append)
    assert off.remaining("ns/b") == 0.0  # a window of 0 opens none
    off.forget("ns/b")
    assert ended == ["ns/a"]


def test_child_holds_keep_a_window_per_job_and_child() -> None:
    clock = ManualClock()
    holds = ChildHolds(clock, 1.0)
    assert holds.remaining("ns/a", "script", 1.0) == 1.0
    clock.advance(0.5)
    assert holds.remaining("ns/a", "script", 1.0) == 0.5  # the window started stays
    assert holds.remaining("ns/a", "other", 2.0) == 2.0   # another child: its own
    assert holds.remaining("ns/b", "script", 1.0) == 1.0  # another job: its own
    holds.forget("ns/a", "script")
    assert holds.remaining("ns/a", "script", 1.0) == 1.0  # a new window
    assert holds.remaining("ns/a", "other", 2.0) == 2.0
    clock.advance(0.25)
    holds.forget("ns/a")  # the job is gone: every window of it ends
    assert holds.remaining("ns/a", "script", 1.0) == 1.0
    assert holds.remaining("ns/a", "other", 2.0) == 2.0
    assert holds.remaining("ns/b", "script", 1.0) == 0.75  # started at 0.5


def test_child_holds_with_a_window_of_zero_hold_nothing() -> None:
    holds = ChildHolds(ManualClock(), 0.0)
    assert holds.remaining("ns/a", "script", 1.0) == 0.0
