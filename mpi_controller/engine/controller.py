"""The job engine's controller: informers → work queue → ``sync(key)`` for one job kind.

:class:`JobController` runs one :class:`~mpi_controller.engine.kind.JobKind`. It owns:

* **event handlers.** A job's add/update enqueues it; its delete forgets it (expectations,
  status-write guard, status hold, vanished children, and the kind's own memory). A child's
  add/update/delete enqueues its controlling job: the controller reference must name the
  kind's resource (group and kind) and a job in the cache; a child controlled by an
  *intermediate* (a launcher batch Job controls its pods) belongs to that intermediate's job.
  Updates with an unchanged resourceVersion are ignored, and so are the updates of other
  children the kind says cannot change a sync (``kind.child_update_matters``: a launcher
  Job's count of ready pods) and pod updates that change nothing a sync reads
  (:func:`~mpi_controller.engine.pods.same_for_jobs`: a sync's outcome depends on the cached
  slim pods alone, so it would be the last one's). Pod updates (phase
  and readiness changes) are batched only while the controller has a backlog
  (:func:`pod_update_delay`): with a worker free they enqueue at once, so an idle controller
  syncs a job as soon as its pod changes (updates that arrive while that key is queued or
  being synced still coalesce into one more sync); with every worker taken they enqueue
  after ``pod_update_batch`` seconds (default 1 s, the Kubernetes Job controller's batch
  period), so the pods of a job that change together cost one sync while the backlog
  drains. A sync of the job that starts within the window drops the held enqueue
  (:class:`~mpi_controller.engine.batch.HeldSyncs`): the updates are in the cache it reads.
  Adds and deletes enqueue at once. No event enqueues a job whose expectations are
  unfulfilled (its writes not yet all seen in the cache): that sync would be turned away.
  The event that fulfils them enqueues the job (each observed create and delete runs the
  check after it is counted), and so does the end of a sync if an event was passed over
  meanwhile and the sync's own failed writes fulfilled them (a failed create lowers them).
  The 4 worker deletes of a finished job's cleanup thus cost one more sync, not 8 (each
  pod's update marking it terminating, then its delete). The echo of a child update a sync
  made (:class:`~mpi_controller.engine.writer.OwnUpdates`: the version its answer named, even
  when the informer delivers it before the answer) starts no sync: that sync went on with the
  answer. When a held status change is written or gone, the sync the hold scheduled for its
  window's end is dropped (:meth:`StatusHold.forget
  <mpi_controller.engine.hold.StatusHold.forget>`).
* **the request order.** Each job gets a number when first seen (jobs first seen earlier get
  smaller ones, across every kind); its sync's API requests carry it as their
  :data:`~mpi_controller.runtime.throttle.REQUEST_PRIORITY`, so when the client's token bucket
  makes requests wait, the earlier job's go first (a per-job order, not breadth-first).
* **the sync.** ``sync(key)``: the job gone from the cache → nothing; our last status write
  not yet delivered → wait for it (:class:`~mpi_controller.engine.context.StatusWriteGuard`);
  default a copy (``kind.prepare``); ``kind.managed_elsewhere`` or a deletionTimestamp →
  nothing; invalid → the kind's Warning event, no requeue; the problems the Go operator
  admits (``kind.admitted_problems``) → their Warning Events, each once per job
  (:class:`~mpi_controller.engine.admitted.ReportedOnce`), and the sync goes on;
  expectations unsatisfied → wait;
  else ``kind.sync`` with a fresh :class:`~mpi_controller.engine.context.SyncContext`; a requeue
  the sync asked for (``SyncContext.requeue_after``) is returned to the runtime controller.
  :class:`~mpi_controller.engine.writer.OwnerGone` (the job was deleted meanwhile) and a 409
  Conflict (a newer version is on its way) end the sync quietly; other errors are retried by
  the runtime :class:`~mpi_controller.runtime.controller.Controller` with backoff.

Nothing here knows a job kind's semantics.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from mpi_controller.engine.admitted import ReportedOnce
from mpi_controller.engine.batch import HeldSyncs
from mpi_controller.engine.context import StatusWriteGuard, SyncContext
from mpi_controller.engine.hold import ChildHolds, StatusHold
from mpi_controller.engine.kind import JobKind
from mpi_controller.engine.pods import same_for_jobs
from mpi_controller.engine.writer import OwnerGone, OwnUpdates, Vanished
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.owners import controller_of
from mpi_controller.kube.resources import Resource
from mpi_controller.kube.timefmt import utcnow
from mpi_controller.runtime.cache import (
    DeletedFinalStateUnknown,
    deletion_handling_key,
    meta_namespace_key,
)
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.controller import Controller, Result
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.expectations import ControllerExpectations
from mpi_controller.runtime.informer import SharedIndexInformer
from mpi_controller.runtime.kubeclient import KubeClient
from mpi_controller.runtime.ratelimit import default_controller_rate_limiter
from mpi_controller.runtime.throttle import REQUEST_PRIORITY
from mpi_controller.runtime.workqueue import RateLimitingQueue

__all__ = ["EngineConfig", "JobController", "pod_update_delay"]

_log = structlog.get_logger(__name__)

_FIRST_SEEN = itertools.count()
"""The order jobs are first seen in, shared by every kind's controller."""


@dataclass(frozen=True)
class EngineConfig:
    """How the engine runs a kind's controller (from ``mpi-controller run``'s flags)."""

    threadiness: int = 2
    queue_qps: float = 10.0
    queue_burst: int = 100
    pod_update_batch: float = 1.0
    """The most a pod update waits before it enqueues its job, only while every worker is
    taken (:func:`pod_update_delay`)."""
    status_counts_hold: float = 1.0
    """The most a status write whose only change is replica counts waits for more of them,
    when the kind expects more pod changes (:class:`~mpi_controller.engine.hold.StatusHold`;
    0: never). 0 also turns off the kinds' holds of a child's change
    (:meth:`~mpi_controller.engine.context.SyncContext.hold_child`)."""


def pod_update_delay(window: float, *, backlog: int) -> float:
    """Seconds to hold a pod update before it enqueues its job: none while a worker is free
    (``backlog`` 0: the keys queued and being synced leave a worker for it), ``window`` (the
    ``--pod-update-batch`` flag) while every worker is taken."""
    return window if backlog > 0 and window > 0 else 0.0


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


class JobController:
    """Reconciles the jobs of one kind; ``controller`` is the runtime Controller to hand to a
    Manager, :meth:`informers` the informers it needs started."""

    def __init__(
        self,
        kind: JobKind,
        client: KubeClient,
        recorder: EventRecorder,
        *,
        pods: SharedIndexInformer,
        config: EngineConfig,
        clock: Clock | None = None,
        wall: Callable[[], datetime] = utcnow,
    ) -> None:
        self.kind = kind
        self._client = client
        self._recorder = recorder
        self._config = config
        self._wall = wall
        self._clock: Clock = clock or LoopClock()
        self.expectations = ControllerExpectations(clock=clock)
        self._guard = StatusWriteGuard(self._clock)
        self._hold = StatusHold(self._clock, config.status_counts_hold, on_end=self._hold_ended)
        self._child_holds = ChildHolds(self._clock, config.status_counts_hold)
        self._vanished = Vanished()
        self._updates = OwnUpdates(self._enqueue)
        """The children our syncs updated, until their echo (which starts no sync)."""
        self._admitted = ReportedOnce()
        self._order: dict[str, int] = {}
        self._passed_over: set[str] = set()
        """Jobs with an event passed over while their expectations were unfulfilled."""
        self._held = HeldSyncs(self._clock, self._enqueue)
        """Jobs whose pod updates wait for the batch window (released when a sync starts)."""
        self._informers = kind.informers()
        self.jobs = self._informers.jobs
        self.pods = pods
        resource = kind.resource
        self.name = resource.kind
        queue: RateLimitingQueue[str] = RateLimitingQueue(
            default_controller_rate_limiter(config.queue_qps, config.queue_burst, clock=clock),
            name=self.name, clock=clock)
        self.controller = Controller(self.name, self.sync, queue=queue,
                                     workers=config.threadiness, clock=clock)
        self._intermediates = {(_group(i.resource.api_version), i.resource.kind): i
                               for i in self._informers.intermediates if i.resource}
        self._register_handlers()

    def informers(self) -> list[SharedIndexInformer]:
        """Every informer this controller reads (the shared pod informer included)."""
        out = self._informers.all()
        if all(i is not self.pods for i in out):
            out.insert(1, self.pods)
        return out

    # -- event handlers ------------------------------------------------------------------

    def _register_handlers(self) -> None:
        self.jobs.add_event_handler(
            on_add=self._enqueue_job, on_update=self._job_updated, on_delete=self._forget_job)
        children = [self.pods, *(c for c in self._informers.children if c is not self.pods)]
        for informer in children:
            kind = informer.resource.kind if informer.resource else ""
            informer.add_event_handler(
                on_add=self._child_added,
                on_update=self._pod_updated if informer is self.pods else
                self._update_handler(kind),
                on_delete=self._deletion_handler(kind))

    def _enqueue_job(self, obj: Obj) -> None:
        key = meta_namespace_key(obj)
        if key not in self._order:
            self._order[key] = next(_FIRST_SEEN)
        self._enqueue(key)

    def _expected(self, key: str) -> bool:
        """Whether a sync of ``key`` would get past its expectations now; if not, the event
        is passed over (the observation that fulfils them enqueues the job)."""
        if self.expectations.satisfied_expectations(key):
            self._passed_over.discard(key)
            return True
        self._passed_over.add(key)
        return False

    def _enqueue(self, key: str) -> None:
        if self._expected(key):
            self.controller.enqueue(key)

    def _job_updated(self, old: Obj, new: Obj) -> None:
        key = meta_namespace_key(new)
        if self._guard.quiet_echo(key, old, new):
            # our own settled status write coming back: nothing new to sync
            _log.debug("status write seen; no sync needed", key=key)
            return
        self._enqueue_job(new)

    def _hold_ended(self, key: str) -> None:
        # The held change was written (or is gone): the sync due at the window's end would
        # find nothing held. A requeue this sync asks for is added when it returns.
        self.controller.cancel_delayed(key)

    def _forget_job(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        key = deletion_handling_key(obj)
        self.expectations.delete_expectations(key)
        self._guard.forget(key)
        self._hold.forget(key)
        self._child_holds.forget(key)
        self._vanished.forget(key)
        self._admitted.forget(key)
        self._order.pop(key, None)
        self._passed_over.discard(key)
        self._held.release(key)
        self.kind.forget(key)

    def _owner_key(self, obj: Mapping[str, Any]) -> tuple[str | None, bool]:
        """The controlling job's key, and whether the job controls ``obj`` directly."""
        ref = controller_of(obj)
        if ref is None:
            return None, False
        namespace = (obj.get("metadata") or {}).get("namespace", "")
        direct = True
        through = self._intermediates.get((_group(str(ref.get("apiVersion", ""))),
                                           str(ref.get("kind", ""))))
        if through is not None:
            middle = through.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
            ref = controller_of(middle) if middle else None
            direct = False
            if ref is None:
                return None, False
        if not self._is_ours(ref):
            return None, False
        key = f"{namespace}/{ref.get('name')}"
        if self.jobs.indexer.get_by_key(key) is None:
            return None, False
        return key, direct

    def _is_ours(self, ref: Mapping[str, Any]) -> bool:
        resource: Resource = self.kind.resource
        return (_group(str(ref.get("apiVersion", ""))) == resource.group
                and ref.get("kind") == resource.kind)

    def _child_added(self, obj: Obj) -> None:
        key, direct = self._owner_key(obj)
        if key is not None:
            if direct:
                self.expectations.creation_observed(key)
            self._enqueue(key)

    def _updated_key(self, old: Obj, new: Obj) -> str | None:
        """The job to enqueue for an update of a child (None: a resync, or not ours)."""
        old_rv = (old.get("metadata") or {}).get("resourceVersion")
        if old_rv == (new.get("metadata") or {}).get("resourceVersion"):
            return None
        return self._owner_key(new)[0]

    def _update_handler(self, kind: str) -> Callable[[Obj, Obj], None]:
        def on_update(old: Obj, new: Obj) -> None:
            key = self._updated_key(old, new)
            if key is None:
                return
            if self._updates.absorbs(kind, new, key):
                return  # our own update coming back: the sync that wrote it went on with it
            job = self.jobs.indexer.get_by_key(key)
            if job is not None and not self.kind.child_update_matters(job, kind, old, new):
                return
            self._enqueue(key)
        return on_update

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        key = self._updated_key(old, new)
        if key is None or same_for_jobs(old, new):
            return
        delay = pod_update_delay(self._config.pod_update_batch,
                                 backlog=self.controller.backlog())
        if delay > 0:
            self._held.hold(key, delay)
        else:
            self._enqueue(key)

    def _deletion_handler(self, kind: str) -> Callable[[Obj | DeletedFinalStateUnknown], None]:
        def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            self._updates.forget(kind, target)
            key, direct = self._owner_key(target)
            if key is None:
                return
            if direct:
                self.expectations.deletion_observed(key)
                self._vanished.deleted(key, kind, (target.get("metadata") or {}).get("name", ""))
            self._enqueue(key)
        return on_delete

    # -- sync ----------------------------------------------------------------------------

    def held(self) -> int:
        """Jobs whose pod updates wait for the batch window."""
        return len(self._held)

    async def sync(self, key: str) -> Result | None:
        # The pod updates held for this job are in the cache this sync reads.
        self._held.release(key)
        token = REQUEST_PRIORITY.set(self._order.get(key, 0))
        try:
            result = await self._sync(key)
        finally:
            REQUEST_PRIORITY.reset(token)
        if key in self._passed_over and self._expected(key):
            # An event came while this sync's writes were unseen, and the writes that failed
            # lowered the expectations: no observation is left to enqueue the job.
            self.controller.enqueue(key)
        return result

    def request_priority(self, key: str) -> int | None:
        """The priority of ``key``'s sync requests (None: the job was never seen)."""
        return self._order.get(key)

    async def _sync(self, key: str) -> Result | None:
        cached = self.jobs.indexer.get_by_key(key)
        if cached is None:
            return None
        if self._guard.pending(key, cached):
            # Our last status write replaced this version; its result is on its way through
            # the informer (which enqueues the key). Syncing now would write on a stale
            # resourceVersion and only earn a conflict.
            _log.debug("waiting for the cache to see the last status write", key=key)
            return None
        job = self.kind.prepare(cached)
        if self.kind.managed_elsewhere(job):
            return None
        if (job.get("metadata") or {}).get("deletionTimestamp"):
            return None
        invalid = self.kind.validate(job)
        if invalid is not None:
            self._emit(job, invalid)
            return None
        for event in self._admitted.first(key, job, self.kind.admitted_problems(job)):
            self._emit(job, event)
        if not self.expectations.satisfied_expectations(key):
            _log.debug("waiting for the cache to see earlier writes", key=key)
            return None
        self.expectations.set_expectations(key, add=0, delete=0)
        ctx = self.new_context(job, key)
        try:
            await self.kind.sync(ctx)
        except OwnerGone as gone:
            # Children were deleted (by the garbage collector) before the cache saw the job's
            # own deletion; the job informer's delete event follows.
            _log.info("job deleted; not recreating its children", key=key, reason=str(gone))
        except ApiError as err:
            if not err.is_conflict():
                raise
            # The object changed since the cache read: its newer version is on its way through
            # the informer and will enqueue the key again; no backoff needed.
            _log.debug("conflict; waiting for the newer version", key=key, error=str(err))
        return Result(requeue_after=ctx.requeue) if ctx.requeue is not None else None

    def new_context(self, job: Obj, key: str) -> SyncContext:
        """The context of one sync of ``job`` (defaulted and valid)."""
        return SyncContext(job, key=key, resource=self.kind.resource, client=self._client,
                       jobs=self.jobs, pods=self.pods, expectations=self.expectations,
                       vanished=self._vanished, guard=self._guard, hold=self._hold,
                       child_holds=self._child_holds,
                       emit=self._emit, wall=self._wall, updates=self._updates)

    def _emit(self, job: Mapping[str, Any], event: Event) -> None:
        self._recorder.event(job, event.type, event.reason, event.message,
                             component=self.kind.event_component(job), keep=event.terminal)
