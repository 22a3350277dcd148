"""Controller expectations (kubernetes ``pkg/controller/controller_utils.go``).

An informer cache lags the controller's own writes. Before creating or deleting children, a
controller records how many creations / deletions it expects to *observe* through its
informers; event handlers lower the counts as the objects show up. Until the expectations of a
key are satisfied, its sync must not create or delete again (it may still write status).

:class:`ControllerExpectations`, per controller key ``{add, del, timestamp}``:

* ``expect_creations(key, n)`` / ``expect_deletions(key, n)`` *replace* the record (the other
  count becomes 0) and stamp it with the clock's time; ``set_expectations`` sets both.
* ``raise_expectations`` / ``lower_expectations`` adjust an existing record (absent: no-op) and
  keep its timestamp; ``creation_observed`` / ``deletion_observed`` lower by one.
* ``satisfied_expectations(key)`` is True when the record is absent, fulfilled (``add <= 0`` and
  ``del <= 0``), or older than ``timeout`` (:data:`EXPECTATIONS_TIMEOUT`, 5 minutes: a lost watch
  event must not wedge a key forever).
* ``delete_expectations(key)`` drops the record (when the owner is deleted).

:class:`UIDTrackingControllerExpectations` also remembers *which* children are expected to go
away (``expect_deletions(key, child_keys)``), so a child seen twice on its way out (an update
setting ``deletionTimestamp``, then the delete) is counted once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import structlog

from mpi_controller.runtime.clock import Clock, LoopClock

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "ControllerExpectations",
    "Expectation",
    "UIDTrackingControllerExpectations",
]

EXPECTATIONS_TIMEOUT = 5 * 60.0
"""Seconds after which unmet expectations no longer block a sync."""

_log = structlog.get_logger(__name__)


@dataclass
class Expectation:
    """Creations (``add``) and deletions (``delete``) a key awaits, stamped ``timestamp``."""

    add: int
    delete: int
    timestamp: float

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Creation/deletion counts each controller key waits to observe."""

    def __init__(self, *, clock: Clock | None = None, timeout: float = EXPECTATIONS_TIMEOUT):
        self._clock: Clock = clock if clock is not None else LoopClock()
        self._timeout = timeout
        self._records: dict[str, Expectation] = {}

    def get_expectations(self, key: str) -> Expectation | None:
        """The record of ``key`` (a live object: do not mutate), or None."""
        return self._records.get(key)

    def satisfied_expectations(self, key: str) -> bool:
        """True when ``key`` has no record, a fulfilled one, or one older than the timeout."""
        record = self._records.get(key)
        if record is None or record.fulfilled():
            return True
        return self._clock.now() - record.timestamp > self._timeout

    def set_expectations(self, key: str, *, add: int, delete: int) -> None:
        """Replace the record of ``key`` with fresh counts, stamped now."""
        self._records[key] = Expectation(add=add, delete=delete, timestamp=self._clock.now())

    def expect_creations(self, key: str, adds: int) -> None:
        self.set_expectations(key, add=adds, delete=0)

    def expect_deletions(self, key: str, dels: int) -> None:
        self.set_expectations(key, add=0, delete=dels)

    def raise_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        """Expect ``add`` more creations and ``delete`` more deletions (if a record exists)."""
        self._adjust(key, add, delete)

    def lower_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        """Expect ``add`` fewer creations and ``delete`` fewer deletions (if a record exists)."""
        self._adjust(key, -add, -delete)

    def creation_observed(self, key: str) -> None:
        self._adjust(key, -1, 0)

    def deletion_observed(self, key: str) -> None:
        self._adjust(key, 0, -1)

    def delete_expectations(self, key: str) -> None:
        self._records.pop(key, None)

    def _adjust(self, key: str, add: int, delete: int) -> None:
        record = self._records.get(key)
        if record is not None:
            record.add += add
            record.delete += delete


class UIDTrackingControllerExpectations:
    """:class:`ControllerExpectations` that tracks the exact children expected to be deleted."""

    def __init__(self, *, clock: Clock | None = None, timeout: float = EXPECTATIONS_TIMEOUT):
        self._counts = ControllerExpectations(clock=clock, timeout=timeout)
        self._deleting: dict[str, set[str]] = {}

    def get_expectations(self, key: str) -> Expectation | None:
        return self._counts.get_expectations(key)

    def get_uids(self, key: str) -> frozenset[str]:
        """The child keys ``key`` still expects to see deleted."""
        return frozenset(self._deleting.get(key, ()))

    def satisfied_expectations(self, key: str) -> bool:
        return self._counts.satisfied_expectations(key)

    def expect_creations(self, key: str, adds: int) -> None:
        self._counts.expect_creations(key, adds)

    def creation_observed(self, key: str) -> None:
        self._counts.creation_observed(key)

    def raise_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        self._counts.raise_expectations(key, add=add, delete=delete)

    def lower_expectations(self, key: str, *, add: int = 0, delete: int = 0) -> None:
        self._counts.lower_expectations(key, add=add, delete=delete)

    def expect_deletions(self, key: str, child_keys: Iterable[str]) -> None:
        """Expect each of ``child_keys`` to be deleted (replaces any earlier record of ``key``)."""
        expected = set(child_keys)
        if self._deleting.get(key):
            _log.warning("clobbering existing delete keys", key=key,
                         keys=sorted(self._deleting[key]))
        self._deleting[key] = expected
        self._counts.expect_deletions(key, len(expected))

    def deletion_observed(self, key: str, child_key: str) -> None:
        """Count the deletion of ``child_key`` once, if ``key`` expected it."""
        expected = self._deleting.get(key)
        if expected is not None and child_key in expected:
            expected.discard(child_key)
            self._counts.deletion_observed(key)

    def delete_expectations(self, key: str) -> None:
        self._deleting.pop(key, None)
        self._counts.delete_expectations(key)
