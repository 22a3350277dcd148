"""The TrainJob kind on the job engine (Trainer v2.3.0's ``pkg/controller/trainjob_controller.go``
``Reconcile``): reads TrainJobs, the JobSets they control and the (Cluster)TrainingRuntimes they
name, and makes each TrainJob's JobSet through the real JobSet controller.

One sync, in upstream's order:

1. a TrainJob whose ``managedBy`` is another controller is left alone;
2. ``Failed`` is dropped (unless ``DeadlineExceeded``);
3. a ``runtimeRef`` of another kind or group fails the TrainJob (``Failed``,
   ``TrainingRuntimeNotSupported``, ``unsupported runtime: <Kind>.<group>``); else, unless the
   TrainJob is finished, its runtime is read from its runtime snapshot
   (:mod:`~mpi_controller.trainjob.snapshot`, from the ConfigMap informer, which keeps whole
   only the ConfigMaps TrainJobs control; a snapshot's parsed runtime is remembered while its
   resourceVersion stays), or, when there is none yet, from the runtime's cache, and the
   snapshot is made (on AlreadyExists, a snapshot the cache had not seen yet, that one is
   used); its JobSet is
   built (:func:`~mpi_controller.trainjob.build.
   desired_objects`) and created when missing, or applied (server-side, field manager
   ``trainer``, forced) while the TrainJob or the JobSet is suspended: a running JobSet is
   never changed; with the MPI policy, the SSH Secret (once) and the hostfile ConfigMap
   (created, or its data replaced) are written first; with a ``podGroupPolicy`` the PodGroup
   is read (no informer caches it) and made when missing, its spec replaced while suspended,
   before the JobSet, whether the JobSet runs or not. A missing runtime, a runtime this
   version cannot build, or a TrainJob that fails the policy's checks gets a Warning
   ``TrainJobResourcesCreationFailed`` and no JobSet, and the sync ends with
   :class:`ResourcesFailed` once the status is written (retried with backoff, as upstream's
   reconciler returns the error);
4. ``Suspended`` follows ``spec.suspend``;
5. the JobSet's outcome and counts become the status; a change of counts alone waits (at most
   the engine's count hold, ``EngineConfig.status_counts_hold``, 1 s) while the JobSet's
   counts are in between (:func:`~mpi_controller.trainjob.status.jobset_changes_expected`):
   it is then written with the next change, or when the hold ends;
6. past ``activeDeadlineSeconds`` the TrainJob fails with ``DeadlineExceeded`` and its JobSet
   is deleted; before it, the TrainJob is synced again at the deadline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpi_controller.engine.context import SyncContext
from mpi_controller.engine.kind import KindInformers
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.fielderrors import aggregate_message
from mpi_controller.kube.jsonvalue import Obj, json_copy
from mpi_controller.kube.owners import controller_of
from mpi_controller.kube.resources import CONFIGMAPS, SECRETS
from mpi_controller.kube.timefmt import format_time
from mpi_controller.runtime.controller import ExpectedError
from mpi_controller.runtime.informer import InformerFactory
from mpi_controller.trainjob import api, constants
from mpi_controller.trainjob import status as st
from mpi_controller.trainjob.build import Desired, desired_objects
from mpi_controller.trainjob.mpi import ssh_auth_secret
from mpi_controller.trainjob.podgroups import PLUGINS_POD_GROUPS, VOLCANO_POD_GROUPS
from mpi_controller.trainjob.resources import (
    CLUSTER_RUNTIMES,
    CONTROLLER_NAME,
    EVENT_COMPONENT,
    JOBSETS,
    RUNTIMES,
    TRAINJOBS,
)
from mpi_controller.trainjob.snapshot import (
    SnapshotError,
    cache_transform,
    runtime_from_snapshot,
    snapshot_configmap,
    snapshot_name,
)

__all__ = ["CLUSTER_RUNTIMES", "CONTROLLER_NAME", "EVENT_COMPONENT", "JOBSETS", "RESOURCES_FAILED",
           "RUNTIMES", "TRAINJOBS", "ResourcesFailed", "TrainJobKind", "runtime_not_found"]

RESOURCES_FAILED = "TrainJobResourcesCreationFailed"
FIELD_MANAGER = "trainer"


class ResourcesFailed(ExpectedError):
    """The sync could not build the TrainJob's objects (or its runtime is of an unsupported
    kind): raised after the status is written, so the TrainJob is synced again with backoff,
    as Trainer's reconciler returns the error (a runtime created after the TrainJob is then
    found: runtimes have no event handlers)."""


def runtime_not_found(ref: Mapping[str, Any]) -> str:
    """Trainer's error for a missing runtime: its own error wrapping the API server's NotFound
    (``pkg/runtime/core``: ``errorNotFoundSpecifiedClusterTrainingRuntime`` and
    ``errorNotFoundSpecifiedTrainingRuntime``, worded differently)."""
    kind = ref.get("kind") or constants.CLUSTER_RUNTIME_KIND
    not_found = f'{kind}.{constants.GROUP} "{ref.get("name", "")}" not found'
    if kind == constants.CLUSTER_RUNTIME_KIND:
        return f"not found {kind} specified in TrainJob: {not_found}"
    return f"{kind} specified in TrainJob is not found: {not_found}"


class TrainJobKind:
    """The TrainJob kind (module doc)."""

    resource = TRAINJOBS

    def __init__(self, factory: InformerFactory, *, namespace: str = "") -> None:
        ns = namespace or None
        self.jobs = factory.informer_for(TRAINJOBS, ns)
        self.jobsets = factory.informer_for(JOBSETS, ns)
        self.runtimes = factory.informer_for(RUNTIMES, ns)
        self.cluster_runtimes = factory.informer_for(CLUSTER_RUNTIMES)
        self.config_maps = factory.informer_for(CONFIGMAPS, ns, transform=cache_transform)
        self._snapshots: dict[str, tuple[str, str, Mapping[str, Any]]] = {}
        """TrainJob key -> (the TrainJob's uid, its snapshot's uid/resourceVersion, the runtime
        the snapshot holds)."""

    def informers(self) -> KindInformers:
        return KindInformers(jobs=self.jobs, children=[self.jobsets],
                             others=[self.runtimes, self.cluster_runtimes, self.config_maps])

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        return api.set_defaults(cached)

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return api.managed_elsewhere(job)

    def event_component(self, job: Mapping[str, Any]) -> str:
        return ""

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        return None

    def admitted_problems(self, job: Mapping[str, Any]) -> Sequence[Event]:
        """None: a runtime's policy checks run in the sync (Warning Events there)."""
        return ()

    def child_update_matters(self, job: Mapping[str, Any], child_kind: str,
                             old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return True

    def forget(self, key: str) -> None:
        self._snapshots.pop(key, None)

    def _runtime(self, ctx: SyncContext) -> Mapping[str, Any] | None:
        ref = ctx.job["spec"]["runtimeRef"]
        if ref.get("kind") == constants.CLUSTER_RUNTIME_KIND:
            return self.cluster_runtimes.indexer.get_by_key(ref.get("name", ""))
        return ctx.cached(self.runtimes, ref.get("name", ""))

    async def _snapshot_or_runtime(self, ctx: SyncContext
                                   ) -> tuple[Mapping[str, Any] | None, str]:
        """The runtime of the TrainJob's snapshot; else the runtime from the cache, whose
        snapshot is made first. ``None`` and the error (a Warning emitted) when neither can
        be used."""
        job = ctx.job
        ref = job["spec"]["runtimeRef"]
        stored = ctx.cached(self.config_maps, snapshot_name(job))
        if stored is None:
            runtime = self._runtime(ctx)
            if runtime is None:
                return None, self._failed(ctx, runtime_not_found(ref))
            made = snapshot_configmap(job, runtime)
            stored = await ctx.writer.create(CONFIGMAPS, made, expect=False, foreign_ok=True)
            if stored.get("data") == made["data"] and controller_of(stored) == controller_of(
                    made):
                # what the snapshot holds: later syncs need not parse its YAML
                self._snapshots[ctx.key] = (*_snapshot_version(job, stored), runtime)
                return runtime, ""
        version = _snapshot_version(job, stored)
        remembered = self._snapshots.get(ctx.key)
        if remembered is not None and remembered[:2] == version:
            return remembered[2], ""
        try:
            runtime = runtime_from_snapshot(job, stored)
        except SnapshotError as err:
            cluster = ref.get("kind") == constants.CLUSTER_RUNTIME_KIND
            how = "getting runtime snapshot" if cluster else "unable to get runtime snapshot"
            return None, self._failed(ctx, f"{how}: {err}")
        self._snapshots[ctx.key] = (*version, runtime)
        return runtime, ""

    async def _reconcile_jobset(self, ctx: SyncContext, jobset: Obj | None
                                ) -> tuple[Obj | None, str]:
        """The JobSet after this sync's writes, and the error that kept it from being built
        ("" when none; a Warning was emitted)."""
        job = ctx.job
        runtime, failure = await self._snapshot_or_runtime(ctx)
        if runtime is None:
            return jobset, failure
        spec = runtime.get("spec") or {}
        errors = api.validate(job, spec)
        if errors:
            return jobset, self._failed(ctx, aggregate_message(errors))
        try:
            desired = desired_objects(job, spec)
        except ValueError as err:
            return jobset, self._failed(ctx, str(err))
        await self._pod_group(ctx, desired)
        if jobset is None:
            await self._mpi_objects(ctx, desired)
            return await ctx.writer.create(JOBSETS, desired.jobset), ""
        ctx.writer.check_controlled(jobset, constants.JOBSET_KIND)
        if job["spec"].get("suspend") or (jobset.get("spec") or {}).get("suspend"):
            await self._mpi_objects(ctx, desired)
            return await ctx.writer.patch_apply(JOBSETS, desired.jobset,
                                                field_manager=FIELD_MANAGER), ""
        return jobset, ""

    @staticmethod
    async def _pod_group(ctx: SyncContext, desired: Desired) -> None:
        """The PodGroup of a runtime with a ``podGroupPolicy``, on every sync that builds,
        before the JobSet (upstream's ``Build``: written when missing, and while the TrainJob
        is suspended): made when missing, its spec replaced while suspended when it
        differs."""
        group = desired.pod_group
        if group is None:
            return
        resource = PLUGINS_POD_GROUPS if group["apiVersion"].startswith(
            PLUGINS_POD_GROUPS.group) else VOLCANO_POD_GROUPS
        current = await ctx.writer.read(resource, group["metadata"]["name"])
        if current is None:
            await ctx.writer.create(resource, group, expect=False)
            return
        spec = {**(current.get("spec") or {}), **group["spec"]}
        if spec != current.get("spec") and ctx.job["spec"].get("suspend"):
            ctx.writer.check_controlled(current, resource.kind)
            await ctx.writer.update(resource, {**current, "spec": spec})

    @staticmethod
    async def _mpi_objects(ctx: SyncContext, desired: Desired) -> None:
        """The MPI SSH Secret (made once; an existing one of the TrainJob is kept) and the
        hostfile ConfigMap (made, or its data replaced when it differs), before the JobSet
        whose pods mount them. Written with the JobSet only (when it is made, and while
        suspended): what they hold cannot change while the JobSet runs."""
        if desired.ssh_secret:
            await ctx.writer.create(SECRETS, ssh_auth_secret(ctx.job), expect=False)
        if desired.hostfile is not None:
            current = await ctx.writer.create(CONFIGMAPS, desired.hostfile, expect=False)
            if current.get("data") != desired.hostfile["data"]:
                await ctx.writer.update(CONFIGMAPS, {**current, "data": desired.hostfile["data"]})

    @staticmethod
    def _failed(ctx: SyncContext, error: str) -> str:
        message = f"TrainJob resources reconciliation failed: {error:.950}"
        if len(error) > 950:
            message += " ..."
        ctx.emit(Event(WARNING, RESOURCES_FAILED, message))
        return error

    async def sync(self, ctx: SyncContext) -> None:
        job = ctx.job
        now = format_time(ctx.now())
        status: Obj = json_copy(dict(job.get("status") or {}))
        conditions: list[Obj] = status.setdefault("conditions", [])
        st.remove_failed(conditions)
        jobset = ctx.cached(self.jobsets, ctx.name)
        key = api.runtime_key(job)
        failure = ""
        if key not in {f"{k}.{constants.GROUP}" for k in api.RUNTIME_KINDS}:
            failure = f"unsupported runtime: {key}"
            st.set_failed(conditions, failure, constants.REASON_RUNTIME_NOT_SUPPORTED, now)
        elif not st.is_finished(status):
            jobset, failure = await self._reconcile_jobset(ctx, jobset)
        st.set_suspended(conditions, bool(job["spec"].get("suspend")), now)
        kept = st.find(conditions, constants.COND_FAILED)
        if kept is not None and kept.get("reason") != constants.REASON_DEADLINE_EXCEEDED:
            kept = None
        if jobset is not None:
            status = st.from_jobset(status, jobset, now)
            conditions = status.setdefault("conditions", [])
        if kept is not None:
            st.set_condition(conditions, kept, now)
        exceeded, left = st.deadline(job, conditions, ctx.now())
        if exceeded:
            st.set_failed(conditions, constants.MESSAGE_DEADLINE_EXCEEDED,
                          constants.REASON_DEADLINE_EXCEEDED, now)
            await ctx.writer.delete(JOBSETS, ctx.name, expect=jobset is not None)
        elif left is not None:
            ctx.requeue_after(left)
        if not conditions:
            status.pop("conditions", None)
        hold = jobset is not None and st.jobset_changes_expected(jobset)
        # Settled unless it failed or the job is suspended: the status is a function of the
        # JobSet and the TrainJob's own conditions, so a sync of the same JobSet with the
        # status written writes nothing; the JobSet's own events start the next sync.
        settled = not failure and not job["spec"].get("suspend")
        await ctx.write_status(status, ctx.original_status, hold=hold, settled=settled)
        if failure:
            raise ResourcesFailed(failure)


def _snapshot_version(job: Mapping[str, Any], stored: Mapping[str, Any]) -> tuple[str, str]:
    """The TrainJob's uid, and the snapshot ConfigMap's uid and resourceVersion."""
    meta = stored.get("metadata") or {}
    return (str(job["metadata"].get("uid", "")),
            f'{meta.get("uid", "")}/{meta.get("resourceVersion", "")}')
