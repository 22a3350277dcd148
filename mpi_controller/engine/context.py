"""One sync of one job: what a kind's ``sync`` sees and does.

:class:`SyncContext` is built by the engine for every sync. It carries the defaulted job (a
private copy the kind may change), reads the caches, writes children through its
:class:`~mpi_controller.engine.writer.ChildWriter` (expectations and ownership checks
included), records events on the job, writes the job's status, asks for the job to be
synced again later (:meth:`SyncContext.requeue_after`) and deletes the job itself
(:meth:`SyncContext.delete_job`, for a ``ttlSecondsAfterFinished``).

The status write is guarded (:class:`StatusWriteGuard`): it is skipped when nothing changed,
sent with the cached ``resourceVersion`` (a conflict means a newer version is on its way),
and afterwards the engine waits until the informer delivers that write before syncing the
job again, for at most ``STATUS_WRITE_WAIT`` seconds (so a lost event cannot stall the job).
A kind may ask for a change to be held (``write_status(..., hold=True)``, when more pod
changes of the job are expected): a change of nothing but replica counts then waits in the
job's :class:`~mpi_controller.engine.hold.StatusHold` window, the job synced again when the
window ends; any other change (a condition, a time) is written at once, held counts with it.
A kind may hold a change of a child the same way (:meth:`SyncContext.hold_child`, the job's
:class:`~mpi_controller.engine.hold.ChildHolds` window for that child).

A status write that changes the job's phase (:func:`~mpi_controller.kube.conditions.phase_of`:
Created, Running, Restarting, Suspended, Succeeded, Failed) logs one info line, ``job phase
changed``, with the kind, the job key, the phase and the previous one.

A context and its writer hold no reference cycle: both, with the job copy, are freed as soon
as the sync returns, not at the cyclic collector's next run.

A requeue serves time-based decisions (a TTL, a deadline); the job's own deletion carries its
uid as a precondition, so a newer job of the same name is never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

import structlog

from mpi_controller.engine.hold import ChildHolds, StatusHold, only_counts_changed
from mpi_controller.engine.writer import ChildWriter, OwnUpdates, Vanished
from mpi_controller.kube.conditions import phase_of
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource
from mpi_controller.runtime.cache import CONTROLLER_UID_INDEX
from mpi_controller.runtime.clock import Clock
from mpi_controller.runtime.expectations import ControllerExpectations
from mpi_controller.runtime.informer import SharedIndexInformer
from mpi_controller.runtime.kubeclient import KubeClient

_log = structlog.get_logger("mpi_controller")

__all__ = ["STATUS_WRITE_WAIT", "StatusWriteGuard", "SyncContext", "status_body"]

STATUS_WRITE_WAIT = 10.0
"""Seconds a sync waits for the informer to deliver the controller's own last status write."""


class StatusWriteGuard:
    """Remembers, per job key, the version our last status write replaced.

    It also tells the echo of a *settled* write apart (:meth:`quiet_echo`): a write whose kind
    vouched that syncing the job again with the status written and the same children would
    change nothing. The update event that delivers such a write need not start a sync, unless
    a sync was turned away while the write was on its way (:meth:`pending` found it so): that
    sync's reason still waits. A settled write is announced before it is sent
    (:meth:`settling`), since its echo may be handled before the write's own response."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._superseded: dict[str, tuple[str, float]] = {}
        self._settled: dict[str, tuple[str, Mapping[str, Any]]] = {}

    def settling(self, key: str, replaced_version: str, status: Mapping[str, Any]) -> None:
        """A settled write of ``status`` over ``replaced_version`` is about to be sent."""
        self._settled[key] = (replaced_version, status)

    def abandoned(self, key: str) -> None:
        """The write announced by :meth:`settling` failed: its echo is not to be expected."""
        self._settled.pop(key, None)

    def written(self, key: str, replaced_version: str) -> None:
        """Our status write replaced ``replaced_version``."""
        self._superseded[key] = (replaced_version, self._clock.now())

    def pending(self, key: str, cached: Mapping[str, Any]) -> bool:
        """Whether the cache still holds the version the last status write replaced (for at
        most :data:`STATUS_WRITE_WAIT` seconds). True turns the sync away, so the echo of
        the write then starts one."""
        entry = self._superseded.get(key)
        if entry is None:
            return False
        version, at = entry
        current = (cached.get("metadata") or {}).get("resourceVersion")
        if current != version or self._clock.now() - at > STATUS_WRITE_WAIT:
            del self._superseded[key]
            return False
        self._settled.pop(key, None)
        return True

    def quiet_echo(self, key: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """Whether the update ``old`` -> ``new`` of the job ``key`` is the echo of a settled
        status write with no sync turned away meanwhile: the version it replaced became
        exactly the status written, nothing else the engine reads changed. Any update ends
        the wait for that echo."""
        settled = self._settled.pop(key, None)
        if settled is None:
            return False
        replaced, status = settled
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("resourceVersion") != replaced or new.get("status") != status:
            return False
        if any(old_meta.get(f) != new_meta.get(f) for f in _ECHO_SAME):
            return False
        if self._superseded.get(key, ("",))[0] == replaced:
            del self._superseded[key]
        return True

    def forget(self, key: str) -> None:
        self._superseded.pop(key, None)
        self._settled.pop(key, None)


_ECHO_SAME = ("uid", "generation", "labels", "annotations", "deletionTimestamp", "finalizers",
              "ownerReferences")
"""The metadata a status write leaves alone; an echo must not differ there either."""


def _uid(job: Mapping[str, Any]) -> Any:
    return job["metadata"].get("uid")


def _still_cached(jobs: SharedIndexInformer, key: str, uid: Any) -> bool:
    """The cache holds ``key`` with ``uid``."""
    cached = jobs.indexer.get_by_key(key)
    return cached is not None and (cached.get("metadata") or {}).get("uid") == uid


def status_body(cached: Mapping[str, Any], status: Mapping[str, Any]) -> Obj:
    """The body of a status write: ``cached`` with ``status`` and without
    ``metadata.managedFields``. Shallow: it shares every other part with ``cached`` (which it
    never changes) and is only to be encoded, not kept or changed."""
    meta = {k: v for k, v in (cached.get("metadata") or {}).items() if k != "managedFields"}
    return {**cached, "metadata": meta, "status": status}


class SyncContext:
    """The context of one sync of the job ``key`` (see the module doc)."""

    def __init__(
        self,
        job: Obj,
        *,
        key: str,
        resource: Resource,
        client: KubeClient,
        jobs: SharedIndexInformer,
        pods: SharedIndexInformer,
        expectations: ControllerExpectations,
        vanished: Vanished,
        guard: StatusWriteGuard,
        hold: StatusHold,
        child_holds: ChildHolds,
        emit: Callable[[Mapping[str, Any], Event], None],
        wall: Callable[[], datetime],
        updates: OwnUpdates,
    ) -> None:
        self.job = job
        self.key = key
        cached = jobs.indexer.get_by_key(key) or {}
        self._cached: Mapping[str, Any] = cached or job
        self.original_status: Mapping[str, Any] = cached.get("status") or {}
        """The job's status as cached when the sync began (what :meth:`write_status` compares
        with)."""
        meta = job["metadata"]
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta.get("name", "")
        self.resource = resource
        self._client = client
        self._jobs = jobs
        self._pods = pods
        self._guard = guard
        self._hold = hold
        self._child_holds = child_holds
        self._emit = emit
        self._wall = wall
        self._updates = updates
        # The writer gets callables that do not hold this context: no reference cycle, so the
        # context, its job copy and the writer are freed when the sync returns, not at the
        # collector's next (rare: GC_THRESHOLDS) young collection.
        self.writer = ChildWriter(client, expectations, job=job, key=key,
                                  emit=partial(emit, job), owner=resource,
                                  owner_cached=partial(_still_cached, jobs, key, _uid(job)),
                                  vanished=vanished, updates=updates)
        self.requeue: float | None = None
        """Seconds after which the engine syncs the job again (the earliest asked for)."""

    # -- reading ------------------------------------------------------------------------

    def now(self) -> datetime:
        """The wall-clock time (for timestamps written to the API)."""
        return self._wall()

    def job_still_cached(self) -> bool:
        """The job this sync works on is still in the cache (same uid)."""
        return _still_cached(self._jobs, self.key, _uid(self.job))

    def cached(self, informer: SharedIndexInformer | None, name: str) -> Obj | None:
        """The cached object ``name`` in the job's namespace (``None`` without an informer),
        or the version an update of ours wrote when the cache has not seen it yet
        (:meth:`OwnUpdates.latest <mpi_controller.engine.writer.OwnUpdates.latest>`)."""
        if informer is None:
            return None
        obj = informer.indexer.get_by_key(f"{self.namespace}/{name}")
        if obj is not None and informer.resource is not None:
            written = self._updates.latest(informer.resource.kind, self.namespace, name)
            if written is not None:
                return written
        return obj

    def pods_controlled_by(self, *owners: Mapping[str, Any] | None) -> list[Obj]:
        """The cached pods whose controller is one of ``owners`` (by uid)."""
        pods: list[Obj] = []
        for owner in owners:
            if owner is not None:
                uid = (owner.get("metadata") or {}).get("uid", "")
                pods += self._pods.indexer.by_index(CONTROLLER_UID_INDEX, uid)
        return pods

    # -- writing ------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Record ``event`` on the job."""
        self._emit(self.job, event)

    def requeue_after(self, seconds: float) -> None:
        """Sync the job again after ``seconds`` (> 0), unless something else does it sooner."""
        if seconds > 0 and (self.requeue is None or seconds < self.requeue):
            self.requeue = seconds

    def hold_child(self, child: str, window: float | None) -> bool:
        """Whether the change a sync would make to the job's ``child`` (a name of the kind's
        choosing) may wait: ``window`` seconds from the first sync that held it, the job synced
        again when it ends (``None``: no more changes are expected, write it now). A change
        not held ends the child's window; so does a configured count hold of 0."""
        if window is not None:
            wait = self._child_holds.remaining(self.key, child, window)
            if wait > 0:
                self.requeue_after(wait)
                return True
        self._child_holds.forget(self.key, child)
        return False

    async def delete_job(self) -> None:
        """Delete the job (background propagation: the garbage collector removes its
        children); NotFound counts as done."""
        meta = self.job["metadata"]
        await self.writer.delete_owner(self.resource, meta["name"], uid=meta.get("uid", ""))

    async def write_status(self, status: Mapping[str, Any], original: Mapping[str, Any], *,
                           hold: bool = False, hold_for: float | None = None,
                           settled: bool = False) -> None:
        """Write ``status`` unless it equals ``original`` (see the module doc), on the job as
        cached: its stored version, whatever view of it the kind prepared for the sync.
        ``hold``: a change of replica counts alone may wait (module doc), at most ``hold_for``
        seconds when given, else the engine's window. ``settled``: the
        kind vouches that a sync of the job with this status and the same children would
        write nothing and start nothing, so the write's echo need not start one
        (:class:`StatusWriteGuard`)."""
        if status == original:
            self._hold.forget(self.key)
            return
        if hold and only_counts_changed(status, original):
            wait = self._hold.remaining(self.key, hold_for)
            if wait > 0:
                self.requeue_after(wait)
                return
        self._hold.forget(self.key)
        body = status_body(self._cached, status)
        replaced = body["metadata"].get("resourceVersion")
        if replaced and settled:
            self._guard.settling(self.key, replaced, status)
        try:
            await self.writer.update_status(self.resource, body, result=False)
        except BaseException:
            self._guard.abandoned(self.key)
            raise
        if replaced:
            self._guard.written(self.key, replaced)
        phase, before = phase_of(status), phase_of(original)
        if phase != before:
            _log.info("job phase changed", kind=self.resource.kind, job=self.key, phase=phase,
                      previous=before or None)
