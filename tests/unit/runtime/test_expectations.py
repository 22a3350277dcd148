"""Controller expectations (kubernetes ``controller_utils.go``), on a manual clock."""

from __future__ import annotations

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.expectations import (
    EXPECTATIONS_TIMEOUT,
    ControllerExpectations,
    Expectation,
    UIDTrackingControllerExpectations,
)


def test_absent_expectations_are_satisfied() -> None:
    exp = ControllerExpectations(clock=ManualClock())
    assert exp.satisfied_expectations("ns/job")
    assert exp.get_expectations("ns/job") is None


def test_creations_must_all_be_observed() -> None:
    clock = ManualClock(100.0)
    exp = ControllerExpectations(clock=clock)
    exp.expect_creations("ns/job", 3)
    assert exp.get_expectations("ns/job") == Expectation(add=3, delete=0, timestamp=100.0)
    for _ in range(2):
        exp.creation_observed("ns/job")
        assert not exp.satisfied_expectations("ns/job")
    exp.creation_observed("ns/job")
    assert exp.satisfied_expectations("ns/job")
    exp.creation_observed("ns/job")  # over-observed: still satisfied (add <= 0)
    assert exp.get_expectations("ns/job") == Expectation(add=-1, delete=0, timestamp=100.0)
    assert exp.satisfied_expectations("ns/job")


def test_expect_replaces_the_whole_record() -> None:
    exp = ControllerExpectations(clock=ManualClock())
    exp.expect_creations("k", 2)
    exp.expect_deletions("k", 1)  # creations outstanding are dropped, as upstream
    assert exp.get_expectations("k") == Expectation(add=0, delete=1, timestamp=0.0)
    exp.deletion_observed("k")
    assert exp.satisfied_expectations("k")


def test_raise_and_lower_adjust_existing_records_only_and_keep_timestamp() -> None:
    clock = ManualClock()
    exp = ControllerExpectations(clock=clock)
    exp.raise_expectations("absent", add=1)
    assert exp.get_expectations("absent") is None
    exp.set_expectations("k", add=1, delete=1)
    clock.advance(10)
    exp.raise_expectations("k", add=2, delete=1)
    assert exp.get_expectations("k") == Expectation(add=3, delete=2, timestamp=0.0)
    exp.lower_expectations("k", add=3, delete=2)
    assert exp.satisfied_expectations("k")


def test_failed_creates_lower_expectations() -> None:
    """replica_set.go: creations never attempted (or failed) are observed by the controller."""
    exp = ControllerExpectations(clock=ManualClock())
    exp.expect_creations("k", 5)
    exp.creation_observed("k")  # one created and seen
    exp.lower_expectations("k", add=4)  # four were skipped after the first error
    assert exp.satisfied_expectations("k")


def test_unmet_expectations_expire_after_five_minutes() -> None:
    clock = ManualClock()
    exp = ControllerExpectations(clock=clock)
    exp.expect_deletions("k", 1)
    assert EXPECTATIONS_TIMEOUT == 300.0
    clock.advance(300.0)
    assert not exp.satisfied_expectations("k")  # strictly older than the timeout
    clock.advance(0.001)
    assert exp.satisfied_expectations("k")
    exp.expect_deletions("k", 1)  # a fresh record restarts the clock
    assert not exp.satisfied_expectations("k")


def test_delete_expectations_starts_clean() -> None:
    exp = ControllerExpectations(clock=ManualClock())
    exp.expect_creations("k", 2)
    exp.delete_expectations("k")
    assert exp.get_expectations("k") is None
    assert exp.satisfied_expectations("k")
    exp.creation_observed("k")  # observations without a record are ignored
    assert exp.get_expectations("k") is None


def test_uid_tracking_counts_each_child_deletion_once() -> None:
    exp = UIDTrackingControllerExpectations(clock=ManualClock())
    exp.expect_deletions("ns/job", {"ns/w-0", "ns/w-1"})
    assert exp.get_uids("ns/job") == {"ns/w-0", "ns/w-1"}
    exp.deletion_observed("ns/job", "ns/w-0")  # update with deletionTimestamp
    exp.deletion_observed("ns/job", "ns/w-0")  # then the delete event
    exp.deletion_observed("ns/job", "ns/other")  # not expected
    assert exp.get_expectations("ns/job") == Expectation(add=0, delete=1, timestamp=0.0)
    assert not exp.satisfied_expectations("ns/job")
    exp.deletion_observed("ns/job", "ns/w-1")
    assert exp.satisfied_expectations("ns/job")
    assert exp.get_uids("ns/job") == frozenset()


def test_uid_tracking_creations_and_delete() -> None:
    clock = ManualClock()
    exp = UIDTrackingControllerExpectations(clock=clock)
    exp.expect_creations("k", 1)
    assert not exp.satisfied_expectations("k")
    exp.creation_observed("k")
    assert exp.satisfied_expectations("k")
    exp.expect_deletions("k", ["a"])
    exp.delete_expectations("k")
    assert exp.get_uids("k") == frozenset()
    assert exp.get_expectations("k") is None
    exp.expect_deletions("k", ["a"])
    clock.advance(300.001)
    assert exp.satisfied_expectations("k")
