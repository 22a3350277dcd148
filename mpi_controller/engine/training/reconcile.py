"""One reconcile of a training-operator job: training-operator v1.9's ``ReconcileJobs``
(``pkg/controller.v1/common/job.go``) for any
:class:`~mpi_controller.engine.training.framework.TrainingFramework`, run by
:class:`~mpi_controller.engine.training.kind.TrainingJobKind` for every sync.

The steps of :class:`TrainingReconcile`, each decision a pure function of this package:

0. the framework's companions (PyTorchJob's HPA; see
   :class:`~mpi_controller.engine.training.framework.Companion`), read from their own
   handler-less informers and written without expectations; a conflict is retried with backoff;
1. ``Created`` condition on a new job (``<Kind> <name> is created.``);
2. a **finished** job (Succeeded or Failed): its pods and their Services per cleanPodPolicy, its
   PodGroup; a succeeded job's active replicas are counted as succeeded; after
   ``ttlSecondsAfterFinished`` the job is deleted (``SuccessfulDeleteJob``). Upstream does this
   in the reconcile after the one that stored the finished status; here the sync that
   finishes the job does it right after its status write (step 7), in the same order;
3. a **suspended** job: every pod and Service and the PodGroup deleted, ``active`` zeroed,
   ``Running=False`` and ``Suspended=True`` (``<Kind>Suspended``); on resume ``Suspended=False``
   (``<Kind>Resumed``) and a new ``startTime``;
4. Warning events for abnormal active pods; the **backoff limit** and **active deadline** fail
   the job (every pod and Service deleted, ``<Kind>Failed``);
5. with gang scheduling the PodGroup (Volcano: no pods until it is admitted);
6. per replica type: missing pods and Services created (first, alone, the master role's
   pods when the job's state hinges on them: in a burst the masters reach the scheduler
   first; a master not created ends the sync, as upstream's first error does; then the rest,
   concurrently), surplus indices deleted, Failed pods
   restarted or failing the job by restart policy (``ExitedWithCode`` events), replicas
   counted; then the framework's status rules; a job they make Succeeded gets step 2's
   counts at once (its active replicas counted as succeeded in the same status write, not in
   a second one the next sync would make);
7. the status written when it changed, the ``training_operator_jobs_*`` metrics counted for
   the transitions it made, and a requeue at the TTL or the active deadline; for a job this
   sync finished, step 2. Every write but those of a suspended job or of one finished
   before is *settled* (``SyncContext.write_status``): a sync of the same pods with the
   status it wrote makes no write, so the write's own echo starts no sync; every pod,
   Service or PodGroup event still does. A change of
   replica counts alone, while more pod changes are expected
   (:func:`~mpi_controller.engine.hold.pod_changes_expected`: a Pending pod, or an ended one
   beside a Running one), is held by the engine for a short window
   (:mod:`mpi_controller.engine.hold`) so the pods of a job that start or end together give
   one write; conditions and times are never held.

Events upstream records on every reconcile are recorded once here: ``ExitedWithCode`` and the
abnormal-pod warnings once per pod and message (while this process runs), ``<Kind>Suspended``
when the job becomes suspended, ``JobTerminated``/``SuccessfulDeletePodGroup`` when a PodGroup
is deleted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import structlog

from mpi_controller.engine.context import SyncContext
from mpi_controller.engine.gather import gather_bounded, gather_raising
from mpi_controller.engine.hold import pod_changes_expected
from mpi_controller.engine.training import children, decisions, gang, replicas
from mpi_controller.engine.training.api import (
    CONDITION_CREATED,
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_RUNNING,
    CONDITION_SUSPENDED,
    ReplicaSpec,
)
from mpi_controller.engine.training.conditions import (
    is_finished,
    is_running,
    is_succeeded,
    is_suspended,
    reason,
    set_condition,
)
from mpi_controller.engine.training.metrics import JOBS_DELETED, count_transitions
from mpi_controller.kube.conditions import get_condition
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_int, as_record, as_str, json_copy
from mpi_controller.kube.owners import controller_ref, is_controlled_by
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.resources import PODS, SERVICES, Resource
from mpi_controller.kube.timefmt import format_time
from mpi_controller.runtime.cache import CONTROLLER_UID_INDEX
from mpi_controller.runtime.controller import ExpectedError
from mpi_controller.runtime.errors import ApiError, go_error_text

if TYPE_CHECKING:
    from mpi_controller.engine.training.kind import TrainingJobKind

__all__ = ["EVENT_EXITED_WITH_CODE", "CompanionConflict", "TrainingReconcile"]

_log = structlog.get_logger(__name__)

EVENT_EXITED_WITH_CODE = "ExitedWithCode"


class CompanionConflict(ExpectedError):
    """A companion changed between its cache read and our update: the sync is retried (its
    informer has no handlers, so no event would bring the job back)."""


Wanted = tuple[ReplicaSpec, int]  # a pod to create: its replica spec and index


class TrainingReconcile:
    """One reconcile of one job (see the module doc for the steps).

    A kind whose pods are not one per replica index (MPIJob ``v1``: a launcher and workers
    with objects of their own) subclasses it and overrides :meth:`reconcile_replicas` (step
    6, upstream's ``ReconcilePods``/``ReconcileServices``); everything around it stays."""

    def __init__(self, kind: TrainingJobKind, ctx: SyncContext) -> None:
        self.kind = kind
        self.fw = kind.framework
        self.ctx = ctx
        self.writer = ctx.writer
        self.job = ctx.job
        self.name = ctx.name
        self.now = ctx.now()
        self.specs, self.policy = kind.specs_and_policy(self.job)
        self.owner_ref = controller_ref(self.job, api_version=kind.resource.api_version,
                                        kind=self.fw.kind)
        self.status: Obj = json_copy(as_dict(self.job.get("status")))
        self.concurrency = kind.options.create_concurrency
        self.hold = False
        """Whether a change of replica counts alone may be held (step 7)."""
        self.cleaned = False
        """Whether this sync already deleted every live pod, Service and the PodGroup."""

    def reason(self, what: str) -> str:
        return reason(self.fw.kind, what)

    def set(self, condition_type: str, status: str, what: str, message: str) -> bool:
        return set_condition(self.status, condition_type, status, self.reason(what), message,
                             now=self.now)

    def replica_statuses(self) -> list[Obj]:
        """The well-formed entries of ``status.replicaStatuses`` (to change in place)."""
        return [r for r in as_dict(self.status.get("replicaStatuses")).values()
                if isinstance(r, dict)]

    def services(self) -> list[Obj]:
        if self.kind.services is None:
            return []
        uid = as_str(as_record(self.job.get("metadata")).get("uid"))
        return self.kind.services.indexer.by_index(CONTROLLER_UID_INDEX, uid)

    async def run(self) -> None:
        original = self.ctx.original_status
        await self.reconcile_companions()
        if get_condition(self.status, CONDITION_CREATED) is None:
            self.set(CONDITION_CREATED, "True", "Created",
                     f"{self.fw.kind} {self.name} is created.")
        pods = self.ctx.pods_controlled_by(self.job)
        if is_finished(self.status):
            await self.clean_up(pods, finished=True)
            if is_succeeded(self.status):
                self.count_active_as_succeeded()
        elif self.policy.suspend:
            await self.suspend(pods)
        else:
            await self.reconcile(pods)
        await self.finish(original, pods)

    def count_active_as_succeeded(self) -> None:
        """A succeeded job's active replicas counted as succeeded (step 2)."""
        for replica in self.replica_statuses():
            active = replica.pop("active", 0)
            if isinstance(active, int) and active:
                replica["succeeded"] = (as_int(replica.get("succeeded")) or 0) + active

    async def reconcile_companions(self) -> None:
        """Step 0: each companion created, updated or deleted (see ``Companion``)."""
        for companion, informer in self.kind.companions:
            existing = self.ctx.cached(informer, self.name)
            desired = None if self.policy.suspend else companion.desired(self.job,
                                                                          self.owner_ref)
            if desired is None:
                if existing is not None and is_controlled_by(existing, self.job) \
                        and not existing["metadata"].get("deletionTimestamp"):
                    await self.writer.delete(companion.resource, self.name, expect=False)
                continue
            try:
                await self.writer.ensure(companion.resource, existing, desired,
                                         needs_update=companion.changed,
                                         apply_update=gang.with_spec, expect=False)
            except ApiError as err:
                if not err.is_conflict():
                    raise
                raise CompanionConflict(f"{companion.resource.kind} {self.name}: {err}") from err

    # -- finishing -------------------------------------------------------------------------

    async def finish(self, original: Mapping[str, Any], pods: list[Obj]) -> None:
        """TTL, status write, metrics, requeue (step 7); for a job this sync finished, then
        step 2 (see :meth:`finished_at_once`)."""
        finishing = is_finished(self.status) and not is_finished(original)
        finished_before = is_finished(self.status) and not finishing
        if finished_before:
            remaining = decisions.ttl_remaining(self.policy, self.status, self.now)
            if remaining == 0:
                count_transitions(original, self.status, namespace=self.ctx.namespace,
                                  framework=self.fw.framework_name)
                await self.delete_job()
                return
            if remaining is not None:
                self.ctx.requeue_after(remaining)
        elif not self.policy.suspend and not finishing:
            deadline = decisions.deadline_remaining(self.policy, self.status, self.now)
            if deadline:
                self.ctx.requeue_after(deadline)
        # Settled unless the job is suspended or was finished before this sync: the rules are
        # a function of the pods and the status they wrote, so the same pods give the same
        # status and no write, and a job this sync finishes gets step 2 right after its write
        # (module doc).
        settled = not self.policy.suspend and not finished_before
        await self.ctx.write_status(self.status, original, hold=self.hold, settled=settled)
        count_transitions(original, self.status, namespace=self.ctx.namespace,
                          framework=self.fw.framework_name)
        if finishing:
            await self.finished_at_once(pods)

    async def finished_at_once(self, pods: list[Obj]) -> None:
        """Step 2 for the job this sync finished, once its status is stored: what the next
        sync would do, as upstream's next reconcile does (pods and Services per
        cleanPodPolicy, the PodGroup, the TTL), without waiting for the status write's echo
        to start that sync. Pods this sync created are not in ``pods``; their own events
        start the sync that cleans them up."""
        if not self.cleaned:
            await self.clean_up(pods, finished=True)
        remaining = decisions.ttl_remaining(self.policy, self.status, self.now)
        if remaining == 0:
            await self.delete_job()
        elif remaining is not None:
            self.ctx.requeue_after(remaining)

    async def delete_job(self) -> None:
        done, failed = self.fw.delete_job_reasons
        try:
            await self.ctx.delete_job()
        except ApiError as err:
            self.ctx.emit(Event(WARNING, failed, f"Error deleting: {err}"))
            raise
        self.ctx.emit(Event(NORMAL, done, f"Deleted job: {self.name}"))
        JOBS_DELETED.labels(job_namespace=self.ctx.namespace,
                            framework=self.fw.framework_name).inc()

    # -- cleanup and suspension ------------------------------------------------------------

    async def clean_up(self, pods: list[Obj], *, finished: bool) -> None:
        """Pods (and their same-named Services) per cleanPodPolicy; the PodGroup."""
        if not finished:
            self.cleaned = True
        doomed = decisions.pods_to_clean_up(pods, self.policy, finished=finished)
        names = [p["metadata"]["name"] for p in doomed]
        await self.delete_pods(names)
        live = {s["metadata"]["name"] for s in self.services()
                if not s["metadata"].get("deletionTimestamp")}
        await self.delete_services([n for n in names if n in live])
        await self.delete_pod_group()

    async def suspend(self, pods: list[Obj]) -> None:
        await self.clean_up(pods, finished=False)
        for replica in self.replica_statuses():
            replica.pop("active", None)
        message = f"{self.fw.kind} {self.name} is suspended."
        if is_running(self.status):
            self.set(CONDITION_RUNNING, "False", "Suspended", message)
        if not is_suspended(self.status):
            self.set(CONDITION_SUSPENDED, "True", "Suspended", message)
            self.ctx.emit(Event(NORMAL, self.reason("Suspended"), message))

    # -- the running job -------------------------------------------------------------------

    async def reconcile(self, pods: list[Obj]) -> None:
        if is_suspended(self.status):
            message = f"{self.fw.kind} {self.name} is resumed."
            self.set(CONDITION_SUSPENDED, "False", "Resumed", message)
            self.status["startTime"] = format_time(self.now)
            self.ctx.emit(Event(NORMAL, self.reason("Resumed"), message))
        for uid, event in decisions.abnormal_pod_events(pods):
            self.report(uid, event)
        failure = self.limit_failure(pods)
        if failure is not None:
            await self.fail_at_limit(pods, failure)
            return
        if self.kind.gang is not None and not await self.sync_pod_group():
            self.status.setdefault("lastReconcileTime", format_time(self.now))
            return
        await self.reconcile_replicas(pods)
        self.status.setdefault("startTime", format_time(self.now))
        for event in self.fw.update_job_status(self.job, self.specs, self.status, pods=pods,
                                               now=self.now):
            self.ctx.emit(event)
        if is_succeeded(self.status):
            self.count_active_as_succeeded()
        self.hold = pod_changes_expected(pods)

    def report(self, uid: str, event: Event) -> None:
        if self.kind.first_report(self.ctx.key, uid, event):
            self.ctx.emit(event)

    def limit_failure(self, pods: list[Obj]) -> str | None:
        """The failure message when the backoff limit or the active deadline is reached."""
        if self.policy.backoff_limit is not None:
            previously = sum(as_int(r.get("failed")) or 0 for r in self.replica_statuses())
            exceeded = decisions.exceeds_backoff_limit(
                self.policy, failed=sum(1 for p in pods if pod_phase(p) == "Failed"),
                previously_failed=previously, active=sum(map(decisions.is_active, pods)),
                replicas=sum(s.replicas for s in self.specs.values()))
            if exceeded or decisions.past_backoff_limit(self.policy, self.specs, pods):
                return (f"Job {self.name} has failed because it has reached the specified "
                        "backoff limit")
        if decisions.past_active_deadline(self.policy, self.status, self.now):
            return (f"Job {self.name} has failed because it was active longer than specified "
                    "deadline")
        return None

    async def fail_at_limit(self, pods: list[Obj], message: str) -> None:
        self.status.setdefault("completionTime", format_time(self.now))
        await self.clean_up(pods, finished=False)
        self.ctx.emit(Event(NORMAL, self.reason("Failed"), message, terminal=True))
        self.set(CONDITION_FAILED, "True", "Failed", message)

    # -- replicas ----------------------------------------------------------------------------

    async def reconcile_replicas(self, pods: list[Obj]) -> None:
        """Pods and Services of every replica type (step 6)."""
        statuses: dict[str, Obj] = as_dict(self.status.get("replicaStatuses"))
        self.status["replicaStatuses"] = statuses
        pods_by_type = replicas.indexed_by_type(pods)
        services_by_type = replicas.indexed_by_type(self.services())
        new_pods: list[tuple[ReplicaSpec, int]] = []
        new_services: list[tuple[ReplicaSpec, int]] = []
        doomed_pods: list[str] = []
        doomed_services: list[str] = []
        for rtype, spec in self.specs.items():
            counts: Obj = {}
            statuses[rtype] = counts
            by_index = replicas.indexed_slices(pods_by_type.get(rtype.lower(), ()),
                                               spec.replicas)
            for index, bucket in enumerate(by_index):
                if not bucket:
                    new_pods.append((spec, index))
                elif len(bucket) > 1:
                    _log.warning("too many pods for one replica", key=self.ctx.key, rtype=rtype,
                                 index=index)
                else:
                    doomed_pods += self.check_pod(spec, index, bucket[0])
                    decisions.count_pod(counts, bucket[0])
            by_index = replicas.indexed_slices(services_by_type.get(rtype.lower(), ()),
                                               spec.replicas)
            for index, bucket in enumerate(by_index):
                if not bucket:
                    new_services.append((spec, index))
                elif len(bucket) == 1 and index >= spec.replicas \
                        and not bucket[0]["metadata"].get("deletionTimestamp"):
                    doomed_services.append(bucket[0]["metadata"]["name"])
        await self.delete_pods(doomed_pods)
        leading, new_pods = self.master_role_first(new_pods)
        if leading:
            await self.create_pods(leading)
        if new_pods and new_services:
            await gather_raising(self.create_pods(new_pods), self.create_services(new_services))
        elif new_pods:
            await self.create_pods(new_pods)
        elif new_services:
            await self.create_services(new_services)
        await self.delete_services(doomed_services)

    def master_role_first(self, wanted: list[Wanted]) -> tuple[list[Wanted], list[Wanted]]:
        """``wanted`` split into the master role's pods and the others when the job's state
        hinges on that role (``master_role_decides``); else, or if all or none have it,
        nothing first."""
        if not self.fw.master_role_decides(self.job, self.specs):
            return [], wanted
        leading = [w for w in wanted if self.fw.is_master_role(self.specs, w[0].rtype, w[1])]
        rest = [w for w in wanted if w not in leading]
        return ([], wanted) if not leading or not rest else (leading, rest)

    def check_pod(self, spec: ReplicaSpec, index: int, pod: Obj) -> list[str]:
        """Exit code, restart policy and scale-down for one existing pod; the pods to delete."""
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return []
        code = decisions.exit_code(pod, self.fw.default_container_name)
        if code is not None:
            self.report(as_str(meta.get("uid")), Event(
                NORMAL, EVENT_EXITED_WITH_CODE,
                f"Pod: {self.ctx.namespace}.{meta['name']} exited with code {code}"))
        delete = index >= spec.replicas
        if pod_phase(pod) == "Failed":
            action = decisions.failed_pod_action(spec.restart_policy, code)
            if action.restart:
                delete = True
                message = f"job {self.name} is restarting because {spec.rtype} replica(s) failed."
                self.ctx.emit(Event(WARNING, self.reason("Restarting"), message))
                self.set(CONDITION_RESTARTING, "True", "Restarting", message)
            elif action.fail:
                message = (f'job "{self.name}" is failing because "{spec.rtype}" replica(s) '
                           "failed.")
                self.ctx.emit(Event(WARNING, self.reason("Failed"), message, terminal=True))
                self.set(CONDITION_FAILED, "True", "Failed", message)
        return [meta["name"]] if delete else []

    async def create_pods(self, wanted: Sequence[tuple[ReplicaSpec, int]]) -> None:
        desired = []
        for spec, index in wanted:
            pod, events = children.replica_pod(self.fw, self.job, self.specs, spec, index,
                                           gang=self.kind.gang)
            for event in events:
                self.ctx.emit(event)
            desired.append(pod)
        await self.create_all(PODS, desired, "pod")

    async def create_services(self, wanted: Sequence[tuple[ReplicaSpec, int]]) -> None:
        desired = [children.replica_service(self.fw, self.job, s, i) for s, i in wanted]
        await self.create_all(SERVICES, desired, "service")

    async def create_all(self, resource: Resource, objects: list[Obj], noun: str) -> None:
        """Create ``objects`` concurrently (``SuccessfulCreate<Kind>`` / ``FailedCreate<Kind>``
        events in order; the first error raised after all have finished)."""
        if not objects:
            return
        names = [o["metadata"]["name"] for o in objects]
        results = await self.each(objects,
                                  lambda o: self.writer.create(resource, o, result=False))
        self.report_writes(resource, names, results, ("Create", "Created", "creating"), noun)

    async def delete_pods(self, names: Sequence[str]) -> None:
        await self.delete_all(PODS, names, "pod")

    async def delete_services(self, names: Sequence[str]) -> None:
        await self.delete_all(SERVICES, names, "service")

    async def delete_all(self, resource: Resource, names: Sequence[str], noun: str) -> None:
        if not names:
            return
        results = await self.each(names, lambda n: self.writer.delete(resource, n))
        self.report_writes(resource, names, results, ("Delete", "Deleted", "deleting"), noun)

    def report_writes(self, resource: Resource, names: Sequence[str], results: list[Any],
                      words: tuple[str, str, str], noun: str) -> None:
        """upstream's PodControl/ServiceControl events for each write, then the first error."""
        verb, done, doing = words
        first: BaseException | None = None
        for name, result in zip(names, results, strict=True):
            if isinstance(result, BaseException):
                first = first or result
                self.ctx.emit(Event(WARNING, f"Failed{verb}{resource.kind}",
                                    f"Error {doing}: {go_error_text(result)}"))
            else:
                self.ctx.emit(Event(NORMAL, f"Successful{verb}{resource.kind}",
                                    f"{done} {noun}: {name}"))
        if first is not None:
            raise first

    async def each(self, items: Sequence[Any], call: Callable[[Any], Awaitable[Any]],
                   ) -> list[Any]:
        """``call`` on every item, at most ``create_concurrency`` at once; results or errors in
        input order (cancellation is re-raised)."""
        return await gather_bounded(items, call, concurrency=self.concurrency)

    # -- gang scheduling ---------------------------------------------------------------------

    def priority(self, name: str) -> int | None:
        informer = self.kind.priority_classes
        pc = informer.indexer.get_by_key(name) if informer is not None and name else None
        value = (pc or {}).get("value")
        return value if isinstance(value, int) else None

    async def sync_pod_group(self) -> bool:
        """Create or update the PodGroup; False while pods must wait for it (Volcano)."""
        scheduler = self.kind.gang
        assert scheduler is not None
        existing = self.ctx.cached(self.kind.pod_groups, self.name)
        desired = gang.new_pod_group(self.job, self.specs, self.policy, scheduler,
                                     owner_ref=self.owner_ref, priority=self.priority,
                                     existing=existing)
        group = await self.writer.ensure(scheduler.resource, existing, desired,
                                         needs_update=gang.pod_group_changed,
                                         apply_update=gang.with_spec)
        return not gang.delays_pod_creation(scheduler, group if existing is not None else None)

    async def delete_pod_group(self) -> None:
        scheduler = self.kind.gang
        if scheduler is None:
            return
        existing = self.ctx.cached(self.kind.pod_groups, self.name)
        if existing is None or existing["metadata"].get("deletionTimestamp"):
            return
        self.writer.check_controlled(existing, "PodGroup")
        self.ctx.emit(Event(NORMAL, "JobTerminated", "Job has been terminated. Deleting PodGroup"))
        try:
            await self.writer.delete(scheduler.resource, self.name)
        except ApiError as err:
            self.ctx.emit(Event(WARNING, "FailedDeletePodGroup", f"Error deleting: {err}"))
            raise
        self.ctx.emit(Event(NORMAL, "SuccessfulDeletePodGroup", f"Deleted PodGroup: {self.name}"))
