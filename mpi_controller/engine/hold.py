"""Holding back a status write whose only change is replica counts, while more are coming.

A job's pods tend to change together: its workers start within a second of each other, and
end within a second of each other. Each change moves a ``replicaStatuses`` counter
(``active``, ``succeeded``, ``failed``), and a controller that syncs a job as soon as its pod
changes would write the status once per pod. Contract:

* :func:`only_counts_changed`: ``status`` differs from ``original`` in nothing but counts:
  the ``active``, ``succeeded`` and ``failed`` numbers of ``replicaStatuses`` entries that both
  have (same replica types; conditions, times, selectors and every other field equal), and,
  for a TrainJob, the :data:`JOB_COUNTS` of its ``jobsStatus`` entries (the same names in the
  same order, no other field of an entry changed; or the first ``jobsStatus``, where there was
  none, each entry a name and counts only).
* :func:`pod_changes_expected`: another pod change of the job is likely soon: one of its pods
  (not being deleted) is Pending, or one has ended (Succeeded or Failed) while another is
  still Running. (A TrainJob's counts are its JobSet's: it asks
  :func:`mpi_controller.trainjob.status.jobset_changes_expected` instead.)
* :class:`StatusHold`: per job key, the time by which a held change must be written:
  :meth:`~StatusHold.remaining` starts the window (``window`` seconds, or the length the caller
  gives) at the first change it holds and returns what is left of it (0: write now; the window
  never restarts while changes stay held), :meth:`~StatusHold.forget` ends it (the status was
  written, or needs no write) and calls ``on_end(key)`` when a window was open: the engine
  then drops the job's sync scheduled for the window's end, which would find nothing held.
  A configured window of 0 holds nothing.

* :class:`ChildHolds`: the same windows for a change of one of a job's children, per child
  name (the kind's choice: MPIJob's ``discover_hosts.sh``): :meth:`~ChildHolds.remaining`
  starts or reads the window of ``(key, child)``, :meth:`~ChildHolds.forget` ends it, or
  every window of the job when no child is named (the job is gone). A configured window of
  0 holds nothing here either.

The engine's :meth:`~mpi_controller.engine.context.SyncContext.write_status` uses the first
three together when a kind asks for it: a change that is not only counts (a condition, a time)
is written at once, with whatever counts it has then; a counts-only change is held for at most
``window`` seconds from its first sync, and the job is synced again when the window ends.
:meth:`~mpi_controller.engine.context.SyncContext.hold_child` is the kinds' way to
:class:`ChildHolds`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mpi_controller.kube.jsonvalue import as_record
from mpi_controller.kube.pods import pod_phase
from mpi_controller.runtime.clock import Clock

__all__ = [
    "COUNTS",
    "JOB_COUNTS",
    "ChildHolds",
    "StatusHold",
    "only_counts_changed",
    "pod_changes_expected",
]

COUNTS = frozenset({"active", "succeeded", "failed"})
"""The counters of a ``replicaStatuses`` entry."""
JOB_COUNTS = frozenset({"active", "ready", "succeeded", "failed", "suspended"})
"""The counters of a TrainJob's ``jobsStatus`` entry (its JobSet's replicated Job counts)."""
_COUNTED = ("replicaStatuses", "jobsStatus")


def _without(mapping: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    drop = set(keys)
    return {k: v for k, v in mapping.items() if k not in drop}


def only_counts_changed(status: Mapping[str, Any], original: Mapping[str, Any]) -> bool:
    """Whether ``status`` differs from ``original`` only in replica counts (module doc)."""
    if status == original:
        return False
    if _without(status, _COUNTED) != _without(original, _COUNTED):
        return False
    return (_replica_counts_only(status.get("replicaStatuses"), original.get("replicaStatuses"))
            and _job_counts_only(status.get("jobsStatus"), original.get("jobsStatus")))


def _replica_counts_only(new: Any, old: Any) -> bool:
    if new == old:
        return True
    if not isinstance(new, dict) or not isinstance(old, dict) or new.keys() != old.keys():
        return False
    return all(isinstance(new[t], dict) and isinstance(old[t], dict)
               and _without(new[t], COUNTS) == _without(old[t], COUNTS) for t in new)


def _job_counts_only(new: Any, old: Any) -> bool:
    if new == old:
        return True
    if not isinstance(new, list) or not all(isinstance(e, dict) for e in new):
        return False
    if not old:
        return all(e.keys() <= JOB_COUNTS | {"name"} for e in new)
    if not isinstance(old, list) or len(new) != len(old):
        return False
    return all(isinstance(o, dict) and _without(n, JOB_COUNTS) == _without(o, JOB_COUNTS)
               for n, o in zip(new, old, strict=True))


def pod_changes_expected(pods: Iterable[Mapping[str, Any]]) -> bool:
    """Whether another change of these pods (one job's) is likely soon (module doc)."""
    running = ended = False
    for pod in pods:
        if as_record(pod.get("metadata")).get("deletionTimestamp"):
            continue
        phase = pod_phase(pod)
        if phase == "Pending":
            return True
        running = running or phase == "Running"
        ended = ended or phase in ("Succeeded", "Failed")
    return running and ended


class StatusHold:
    """Per job key, the end of the window a counts-only status change is held in."""

    def __init__(self, clock: Clock, window: float,
                 on_end: Callable[[str], object] | None = None) -> None:
        self._clock = clock
        self._window = window
        self._on_end = on_end
        self._until: dict[str, float] = {}

    def remaining(self, key: str, window: float | None = None) -> float:
        """Seconds left to hold ``key``'s change (0: write it now); the first call for a key
        (since :meth:`forget`) starts its window, ``window`` seconds long when given (a kind
        that knows how soon its next change comes), else the configured one. A configured
        window of 0 holds nothing, whatever ``window``."""
        if self._window <= 0:
            return 0.0
        now = self._clock.now()
        until = self._until.setdefault(key, now + (self._window if window is None else window))
        return max(0.0, until - now)

    def forget(self, key: str) -> None:
        if self._until.pop(key, None) is not None and self._on_end is not None:
            self._on_end(key)


class ChildHolds:
    """Per child name, the :class:`StatusHold` windows of the jobs whose change of that child
    is held (see the module doc)."""

    def __init__(self, clock: Clock, window: float) -> None:
        self._clock = clock
        self._window = window
        self._holds: dict[str, StatusHold] = {}

    def remaining(self, key: str, child: str, window: float) -> float:
        """Seconds left to hold the change of ``key``'s ``child`` (0: write it now); the first
        call since :meth:`forget` starts a window of ``window`` seconds."""
        hold = self._holds.get(child)
        if hold is None:
            hold = self._holds[child] = StatusHold(self._clock, self._window)
        return hold.remaining(key, window)

    def forget(self, key: str, child: str | None = None) -> None:
        """End the window of ``key``'s ``child``, or all of ``key``'s without a child."""
        for name, hold in self._holds.items():
            if child is None or name == child:
                hold.forget(key)
