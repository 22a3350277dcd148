"""MPIJobs created as ``kubeflow.org/v1alpha2`` run as mpi-operator v0.2.3 ran them
(``pkg/controllers/v1alpha2``' ``syncHandler``). The MPIJob kind (:mod:`mpi_controller.mpi.kind`)
hands such jobs to :class:`MPIJobV1Alpha2Mode`; they are stored as ``v2beta1``, so the mode
reads each one back as the ``v1alpha2`` object it was written as
(:func:`~mpi_controller.mpi.conversion.convert`, once per stored version of the job:
:class:`~mpi_controller.mpi.conversion.memo.ConvertedJobs`) and defaults it as v0.2.3 did.

One reconcile (:class:`MPIJobV1Alpha2Reconcile`):

1. ``Created`` on a new job;
2. a finished job (Succeeded or Failed): with cleanPodPolicy ``Running`` or ``All`` (both
   alike) the worker StatefulSet is scaled to 0 and ``Worker`` counts nothing; the launcher Job
   and the rest stay; the status is written;
3. ``startTime``; the launcher Job ``<job>-launcher`` must be the job's; while it has not
   finished: the ConfigMap, the ServiceAccount, and the Role then the RoleBinding (each
   created once, never updated; the three concurrently), the worker StatefulSet (created when
   there are workers, its ``replicas`` kept equal to ``Worker.replicas``), then the launcher
   Job when missing
   (``SettedPodTemplateRestartPolicy`` when its template sets a restart policy);
4. the status (:func:`.status.update_status`), its Events, the ``mpi_operator_jobs_successful``,
   ``_failed`` and ``_restarted`` counters (once per transition), the write.

No pods are watched (v0.2.3 had no pod informer): the launcher Job's and the StatefulSet's own
status say all the sync needs, and their changes bring the job back. The children's informers
select ``mpi_job_name`` (Job, StatefulSet) and ``app`` (the others), the labels v0.2.3 puts.
An invalid job gets ``ValidationError`` (:func:`mpi_controller.mpi.v1alpha2.validate`).
v0.2.3's gang scheduling (kube-batch's ``scheduling.incubator.k8s.io/v1alpha1`` PodGroups) is
not done: that API is gone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpi_controller.engine.context import SyncContext
from mpi_controller.engine.gather import gather_raising
from mpi_controller.engine.kind import KindInformers
from mpi_controller.kube.conditions import has_condition
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_int, as_record, json_copy
from mpi_controller.kube.owners import controller_ref
from mpi_controller.kube.resources import (
    CONFIGMAPS,
    JOBS,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
    STATEFUL_SETS,
    Resource,
)
from mpi_controller.kube.timefmt import format_time
from mpi_controller.mpi import constants, kubexec, metrics
from mpi_controller.mpi.conversion.memo import ConvertedJobs
from mpi_controller.mpi.decisions import LAUNCHER_STATUS_UNREAD, launcher_update_matters
from mpi_controller.mpi.events import validation_error_event
from mpi_controller.mpi.options import MPIJOBS, MPIJobOptions
from mpi_controller.mpi.v1alpha2 import launch
from mpi_controller.mpi.v1alpha2.defaults import set_defaults
from mpi_controller.mpi.v1alpha2.status import (
    clean_up_workers,
    mark_created,
    update_status,
)
from mpi_controller.mpi.v1alpha2.types import parse_mpi_job
from mpi_controller.mpi.v1alpha2.validation import validate
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = ["MPIJobV1Alpha2Mode", "MPIJobV1Alpha2Reconcile"]

VERSION = "v1alpha2"
_COUNTERS = {constants.CONDITION_SUCCEEDED: metrics.JOBS_SUCCESSFUL,
             constants.CONDITION_FAILED: metrics.JOBS_FAILED,
             constants.CONDITION_RESTARTING: metrics.JOBS_RESTARTED}


_LAUNCHER_STATUS_UNREAD = LAUNCHER_STATUS_UNREAD - {"active"}

class MPIJobV1Alpha2Mode:
    """The MPIJob kind's ``v1alpha2`` mode (module doc): a
    :class:`~mpi_controller.engine.kind.JobKind` on the stored MPIJob resource."""

    resource = MPIJOBS

    def __init__(self, factory: InformerFactory, *, namespace: str = "",
                 pods: SharedIndexInformer, options: MPIJobOptions) -> None:
        """``pods`` is not read: v0.2.3 watched none."""
        ns = namespace or None
        self.mpijobs = factory.informer_for(MPIJOBS, ns)
        self.config_maps = factory.informer_for(CONFIGMAPS, ns, label_selector="app")
        self.service_accounts = factory.informer_for(SERVICE_ACCOUNTS, ns, label_selector="app")
        self.roles = factory.informer_for(ROLES, ns, label_selector="app")
        self.role_bindings = factory.informer_for(ROLE_BINDINGS, ns, label_selector="app")
        self.stateful_sets = factory.informer_for(STATEFUL_SETS, ns,
                                                  label_selector=launch.JOB_NAME_LABEL)
        self.jobs = factory.informer_for(JOBS, ns, label_selector=launch.JOB_NAME_LABEL)
        self.kubectl_delivery_image = options.kubectl_delivery_image_v1alpha2
        self.converted = ConvertedJobs(VERSION, set_defaults)
        """Each job as ``v1alpha2``, defaulted, once per stored version."""

    def informers(self) -> KindInformers:
        return KindInformers(jobs=self.mpijobs, children=[
            self.config_maps, self.service_accounts, self.roles, self.role_bindings,
            self.stateful_sets, self.jobs])

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        """The job as written in ``v1alpha2``, defaulted: converted once per stored version of
        the job, a fresh copy for every sync."""
        return self.converted.get(cached)

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return False  # v0.2.3 knew no managedBy

    def event_component(self, job: Mapping[str, Any]) -> str:
        return ""

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        errors = validate(job)
        return validation_error_event(errors) if errors else None

    def admitted_problems(self, job: Mapping[str, Any]) -> Sequence[Event]:
        return []  # none checked for v1alpha2 jobs

    def child_update_matters(self, job: Mapping[str, Any], child_kind: str,
                             old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """A launcher Job's update matters unless it changes only status fields this mode
        never reads (``v2beta1``'s, ``active`` aside: the ``launcherStatus`` follows it)."""
        return launcher_update_matters(child_kind, old, new, unread=_LAUNCHER_STATUS_UNREAD)

    async def sync(self, ctx: SyncContext) -> None:
        await MPIJobV1Alpha2Reconcile(self, ctx).run()

    def forget(self, key: str) -> None:
        self.converted.forget(key)


class MPIJobV1Alpha2Reconcile:
    """One reconcile of one ``v1alpha2`` MPIJob (module doc)."""

    def __init__(self, mode: MPIJobV1Alpha2Mode, ctx: SyncContext) -> None:
        self.mode = mode
        self.ctx = ctx
        self.job = ctx.job
        self.name = ctx.name
        self.writer = ctx.writer
        self.spec = parse_mpi_job(self.job).spec
        self.owner_ref = controller_ref(self.job, api_version=MPIJOBS.api_version,
                                        kind=constants.KIND)
        self.status: Obj = json_copy(as_dict(self.job.get("status")))

    async def run(self) -> None:
        now = self.ctx.now()
        mark_created(self.status, self.ctx.key, now=now)
        if has_condition(self.status, constants.CONDITION_SUCCEEDED) \
                or has_condition(self.status, constants.CONDITION_FAILED):
            if self.spec.clean_pod_policy in (constants.CLEAN_POD_POLICY_ALL,
                                              constants.CLEAN_POD_POLICY_RUNNING):
                await self.scale_workers(0)
                clean_up_workers(self.status)
            await self.ctx.write_status(self.status, self.ctx.original_status)
            return
        self.status.setdefault("startTime", format_time(now))
        launcher = self.ctx.cached(self.mode.jobs, kubexec.launcher_name(self.name))
        if launcher is not None:
            self.writer.check_controlled(launcher, JOBS.kind)
        workers = None
        if launcher is None or not _finished(launcher):
            replicas = self.worker_replicas()
            await gather_raising(
                self.ensure(CONFIGMAPS, self.mode.config_maps,
                            launch.new_config_map(self.job, replicas, owner_ref=self.owner_ref)),
                self.ensure(SERVICE_ACCOUNTS, self.mode.service_accounts,
                            kubexec.new_launcher_service_account(self.name, self.ctx.namespace,
                                                            owner_ref=self.owner_ref)),
                self.ensure_role_then_binding(replicas))
            workers = await self.scale_workers(replicas)
            if launcher is None:
                launcher = await self.create_launcher()
        change = update_status(self.status, self.ctx.key, launcher=launcher, workers=workers,
                               now=now)
        for event in change.events:
            self.ctx.emit(event)
        await self.ctx.write_status(self.status, self.ctx.original_status)
        for kind in change.entered:
            if kind in _COUNTERS:
                _COUNTERS[kind].inc()

    def worker_replicas(self) -> int:
        worker = self.spec.replica(constants.REPLICA_TYPE_WORKER)
        return (worker.replicas or 0) if worker is not None else 0

    async def ensure(self, resource: Resource, informer: SharedIndexInformer,
                     desired: Obj) -> None:
        """Get-or-create (never updated)."""
        existing = self.ctx.cached(informer, desired["metadata"]["name"])
        await self.writer.ensure(resource, existing, desired)

    async def ensure_role_then_binding(self, replicas: int) -> None:
        """The Role first: the API server refuses a RoleBinding to a Role that does not exist
        yet unless the creator may ``bind``."""
        await self.ensure(ROLES, self.mode.roles, kubexec.new_launcher_role(
            self.name, self.ctx.namespace, replicas, owner_ref=self.owner_ref))
        await self.ensure(ROLE_BINDINGS, self.mode.role_bindings, kubexec.new_launcher_role_binding(
            self.name, self.ctx.namespace, owner_ref=self.owner_ref))

    async def scale_workers(self, replicas: int) -> Obj | None:
        """The worker StatefulSet with ``replicas`` (created only when > 0); ``None`` when
        there is none."""
        name = launch.worker_set_name(self.name)
        existing = self.ctx.cached(self.mode.stateful_sets, name)
        if existing is None:
            if replicas <= 0:
                return None
            return await self.writer.create(STATEFUL_SETS, launch.new_worker_set(
                self.job, replicas, owner_ref=self.owner_ref))
        self.writer.check_controlled(existing, STATEFUL_SETS.kind)
        if as_int(as_record(existing.get("spec")).get("replicas")) == replicas:
            return dict(existing)
        scaled = json_copy(dict(existing))
        scaled["spec"]["replicas"] = replicas
        return await self.writer.update(STATEFUL_SETS, scaled)

    async def create_launcher(self) -> Obj:
        launcher_spec = self.spec.replica(constants.REPLICA_TYPE_LAUNCHER)
        template = launcher_spec.template if launcher_spec is not None else {}
        for event in kubexec.template_restart_policy_events(template):
            self.ctx.emit(event)
        return await self.writer.create(JOBS, launch.new_launcher_job(
            self.job, image=self.mode.kubectl_delivery_image, owner_ref=self.owner_ref))


def _finished(job: Mapping[str, Any]) -> bool:
    status = as_dict(job.get("status"))
    return has_condition(status, "Complete") or has_condition(status, "Failed")
