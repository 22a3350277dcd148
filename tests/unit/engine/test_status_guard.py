"""StatusWriteGuard: the version a status write replaced holds syncs back until the cache moves
on (or STATUS_WRITE_WAIT passes); the echo of a settled write is told apart exactly."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpi_controller.engine.context import STATUS_WRITE_WAIT, StatusWriteGuard
from mpi_controller.runtime.clock import ManualClock

KEY = "ns/job"
STATUS = {"conditions": [{"type": "Running", "status": "True"}]}


def job(rv: str, status: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "job", "namespace": "ns", "uid": "u1", "generation": 1,
                         "resourceVersion": rv, "labels": {"a": "b"}, **meta},
            "status": status or {}}


def settled_guard() -> StatusWriteGuard:
    guard = StatusWriteGuard(ManualClock())
    guard.settling(KEY, "10", copy.deepcopy(STATUS))
    guard.written(KEY, "10")
    return guard


def test_the_echo_of_a_settled_write_is_quiet_once() -> None:
    guard = settled_guard()
    assert guard.quiet_echo(KEY, job("10"), job("11", STATUS))
    assert not guard.pending(KEY, job("10"))  # the write is no longer waited for
    assert not guard.quiet_echo(KEY, job("11", STATUS), job("12", STATUS))


def test_an_echo_handled_before_the_write_returns_is_quiet_too() -> None:
    guard = StatusWriteGuard(ManualClock())
    guard.settling(KEY, "10", STATUS)
    assert guard.quiet_echo(KEY, job("10"), job("11", STATUS))  # the watch was quicker
    guard.written(KEY, "10")
    assert not guard.pending(KEY, job("11", STATUS))


def test_the_echo_of_a_write_that_failed_is_not_expected() -> None:
    guard = StatusWriteGuard(ManualClock())
    guard.settling(KEY, "10", STATUS)
    guard.abandoned(KEY)
    assert not guard.quiet_echo(KEY, job("10"), job("11", STATUS))


@pytest.mark.parametrize(("old", "new"), [
    (job("9"), job("11", STATUS)),                          # not the version it replaced
    (job("10"), job("11", {"conditions": []})),             # not the status written
    (job("10"), job("11", STATUS, generation=2)),           # the spec changed too
    (job("10"), job("11", STATUS, labels={})),
    (job("10"), job("11", STATUS, deletionTimestamp="t")),
    (job("10"), job("11", STATUS, uid="u2")),
])
def test_anything_else_is_no_quiet_echo(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert not settled_guard().quiet_echo(KEY, old, new)


def test_a_write_not_settled_or_a_sync_turned_away_makes_no_quiet_echo() -> None:
    guard = StatusWriteGuard(ManualClock())
    guard.written(KEY, "10")  # announced by no settling()
    assert not guard.quiet_echo(KEY, job("10"), job("11", STATUS))
    guard = settled_guard()
    assert guard.pending(KEY, job("10"))  # a sync turned away: its reason still waits
    assert not guard.quiet_echo(KEY, job("10"), job("11", STATUS))


def test_pending_until_the_cache_moves_on_or_the_wait_ends() -> None:
    clock = ManualClock()
    guard = StatusWriteGuard(clock)
    guard.written(KEY, "10")
    assert guard.pending(KEY, job("10"))
    clock.advance(STATUS_WRITE_WAIT + 0.1)
    assert not guard.pending(KEY, job("10"))
    guard.settling(KEY, "10", STATUS)
    guard.written(KEY, "10")
    guard.forget(KEY)
    assert not guard.pending(KEY, job("10"))
    assert not guard.quiet_echo(KEY, job("10"), job("11", STATUS))
