"""The MPIJob reconcile: mpi-operator v0.8.2's sync (``pkg/controller/mpi_job_controller.go``,
``syncHandler``) for the jobs created as ``kubeflow.org/v2beta1``, the MPIJob kind's
``v2beta1`` mode (:class:`MPIJobV2Beta1Mode`; the kind, :mod:`mpi_controller.mpi.kind`, picks a
job's mode by the version it was created in).

The mode watches launcher Jobs, Services, ConfigMaps and Secrets carrying an ``app`` label, with
gang scheduling PodGroups and PriorityClasses, and the shared pod informer; defaults and
validates jobs as ``v2beta1``; leaves a job whose ``runPolicy.managedBy`` names another
controller alone. :class:`MPIJobReconcile` is steps 7 to 15 of ``syncHandler``, each decision a
pure function of this package:

1. ``Created`` condition on a new job; a finished job only cleans up its workers
   (cleanPodPolicy) and writes its status;
2. ``startTime``; the launcher must be ours;
3. while the launcher has not finished: Service, ConfigMap (hosts added held while workers
   start: :func:`~mpi_controller.mpi.decisions.hosts_hold`) and SSH Secret (concurrently), then
   unless suspended the PodGroup and the workers (scale down first, then the missing indices,
   concurrently), then the launcher when the creation policy allows;
4. the launcher's suspension follows the job's; a suspended job's workers are deleted;
5. the status from launcher, launcher pods and workers; its events and metrics; the write,
   *settled* unless it finishes the job or the job is suspended (its echo starts no sync:
   one with that status and the same children would write nothing); a change of replica
   counts alone held while the next is due (:func:`~mpi_controller.mpi.decisions.counts_hold`:
   a pod Pending, the launcher Job about to finish), the job synced again when the hold ends.

The opt-ins of :mod:`~mpi_controller.mpi.features` (all off: exactly the above) hook in here:
the PodGroup sized by the workers (step 3), the launcher held on resume (4), failure details
and eviction completing the job (5), the worker selector and job metrics at every status
write; and for a finished job (1) the launcher's cleanup and the TTL, which may ask the engine
to sync the job again when it runs out (``SyncContext.requeue_after``) or delete the job
itself.

The mode keeps, per job, what a sync reads of it
(:class:`~mpi_controller.kube.changes.KeptJobs`): the defaulted copy of the cached job, whether
it is managed elsewhere, its validation Event, its admitted problems and its typed view. A sync
of the same cached object reuses them all; a sync of a newer object that differs only in what a
status write changes (:func:`~mpi_controller.kube.changes.same_but_status`) reuses the
defaulted ``spec`` and what was read, with the new status and metadata copied. Each sync gets a
shallow copy of the kept job: the sync sets the job's ``status`` and changes nothing else of
it. The entry of a job is dropped when the job is deleted or finished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpi_controller.engine.admitted import admitted_events
from mpi_controller.engine.context import SyncContext
from mpi_controller.engine.gather import gather_raising
from mpi_controller.engine.kind import KindInformers
from mpi_controller.engine.writer import ResourceNotControlled
from mpi_controller.kube.changes import KeptJobs
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_record
from mpi_controller.kube.owners import is_controlled_by
from mpi_controller.kube.resources import (
    CONFIGMAPS,
    JOBS,
    PODS,
    PRIORITY_CLASSES,
    SECRETS,
    SERVICES,
    Resource,
)
from mpi_controller.kube.timefmt import parse_time
from mpi_controller.mpi import (
    configmap,
    constants,
    decisions,
    events,
    features,
    gang,
    launcher,
    metrics,
    naming,
    secret,
    service,
    status,
    worker,
)
from mpi_controller.mpi.conditions import get_condition, is_finished, is_succeeded
from mpi_controller.mpi.options import MPIJOBS, MPIJobOptions
from mpi_controller.mpi.v2beta1 import admitted_problems, parse_mpi_job, set_defaults, validate
from mpi_controller.mpi.v2beta1.types import parsed_once
from mpi_controller.runtime.errors import ApiError, go_error_text
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = ["MPIJobReconcile", "MPIJobV2Beta1Mode"]


class MPIJobV2Beta1Mode:
    """The MPIJob kind's ``v2beta1`` mode (module doc): a
    :class:`~mpi_controller.engine.kind.JobKind` on :data:`~mpi_controller.mpi.options.MPIJOBS`
    for the jobs created as ``v2beta1``."""

    resource = MPIJOBS

    def __init__(self, factory: InformerFactory, *, namespace: str = "",
                 pods: SharedIndexInformer, options: MPIJobOptions) -> None:
        self.options = options
        self.phases = metrics.PhaseTracker()
        self.kept = KeptJobs(lambda cached: set_defaults(cached), shallow=True)
        """Each job's defaulted copy and what is read of it, between syncs (module doc)."""
        ns = namespace or None
        self.pods = pods
        self.mpijobs = factory.informer_for(MPIJOBS, ns)
        self.jobs = factory.informer_for(JOBS, ns, label_selector="app")
        self.services = factory.informer_for(SERVICES, ns, label_selector="app")
        self.config_maps = factory.informer_for(CONFIGMAPS, ns, label_selector="app")
        self.secrets = factory.informer_for(SECRETS, ns, label_selector="app")
        self.pod_group_api = gang.pod_group_api(options.gang_scheduling)
        self.pod_groups: SharedIndexInformer | None = None
        self.priority_classes: SharedIndexInformer | None = None
        self.pod_group_resource: Resource | None = None
        if self.pod_group_api is not None:
            api = self.pod_group_api
            self.pod_group_resource = Resource(api.group, api.version, api.plural, True, api.kind)
            self.pod_groups = factory.informer_for(self.pod_group_resource, ns)
            self.priority_classes = factory.informer_for(PRIORITY_CLASSES)

    def informers(self) -> KindInformers:
        children = [self.pods, self.jobs, self.services, self.config_maps, self.secrets]
        if self.pod_groups is not None:
            children.append(self.pod_groups)
        others = [self.priority_classes] if self.priority_classes is not None else []
        return KindInformers(jobs=self.mpijobs, children=children, intermediates=[self.jobs],
                             others=others)

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        """The defaulted job: a shallow copy of the one kept for ``cached`` (module doc)."""
        return self.kept.prepare(cached)

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return self.kept.read(job, "managed", lambda: (
            decisions.managed_by_external_controller(job) is not None))

    def event_component(self, job: Mapping[str, Any]) -> str:
        return ""

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        def invalid() -> Event | None:
            errors = validate(job)
            return events.validation_error_event(errors) if errors else None
        return self.kept.read(job, "invalid", invalid)

    def admitted_problems(self, job: Mapping[str, Any]) -> Sequence[Event]:
        return self.kept.read(job, "admitted", lambda: admitted_events(
            admitted_problems(dict(job)), runs_as="mpi-operator"))

    def child_update_matters(self, job: Mapping[str, Any], child_kind: str,
                             old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return decisions.launcher_update_matters(child_kind, old, new)

    async def sync(self, ctx: SyncContext) -> None:
        reconcile = MPIJobReconcile(self, ctx)
        view = self.kept.read(ctx.job, "view", lambda: parse_mpi_job(ctx.job))
        with parsed_once(ctx.job, view):  # the sync changes only the job's status
            await reconcile.run()
        if is_finished(reconcile.status):
            self.kept.drop(ctx.namespace, ctx.name)

    def forget(self, key: str) -> None:
        namespace, _, name = key.rpartition("/")
        self.kept.drop(namespace, name)
        if self.options.features.job_metrics:
            namespace, _, name = key.partition("/")
            metrics.forget_job_info(naming.launcher_name(name), namespace)
            self.phases.forget(key)


class MPIJobReconcile:
    """One reconcile of one MPIJob (see the module doc for the steps)."""

    def __init__(self, kind: MPIJobV2Beta1Mode, ctx: SyncContext) -> None:
        self.kind = kind
        self.options = kind.options
        self.ctx = ctx
        self.job = ctx.job
        self.name = ctx.name
        self.writer = ctx.writer
        self.features = kind.options.features
        self.status: Mapping[str, Any] = {}
        """The status the sync wrote, or found needing no write."""

    def job_pods(self) -> list[Obj]:
        """The job's pods: its workers, and the pods of its launcher Job."""
        launcher_job = self.ctx.cached(self.kind.jobs, naming.launcher_name(self.name))
        return self.ctx.pods_controlled_by(self.job, launcher_job)

    async def run(self) -> None:
        original = self.ctx.original_status
        new_status, created_events = status.mark_created(self.job, now=self.ctx.now())
        self.job["status"] = new_status
        for event in created_events:
            metrics.JOBS_CREATED.inc()
            self.ctx.emit(event)
        cleanup = decisions.needs_finished_cleanup(self.job)
        if cleanup is not None:
            await self.finished(cleanup, original)
            return
        self.job["status"] = status.mark_started(self.job, now=self.ctx.now())
        launcher_job = self.ctx.cached(self.kind.jobs, naming.launcher_name(self.name))
        if launcher_job is not None:
            self.writer.check_controlled(launcher_job, JOBS.kind)
        workers: list[Obj] = []
        if not decisions.is_job_finished(launcher_job):
            workers = await self.ensure_children()
            if launcher_job is None and decisions.should_create_launcher(self.job, workers):
                launcher_job = await self.create_launcher()
        if launcher_job is not None:
            launcher_job = await self.sync_launcher_suspension(launcher_job, workers)
        if decisions.is_suspended(self.job):
            await self.clean_up_workers()
        launcher_pods = (decisions.select_job_pods(launcher_job, self.job_pods())
                         if launcher_job else ())
        update = status.update_mpi_job_status(
            self.job, launcher=launcher_job, launcher_pods=launcher_pods, workers=workers,
            now=self.ctx.now(),
            failure_pods=self.job_pods() if self.features.failure_details else None,
            complete_on_eviction=self.features.clean_up_evicted_jobs)
        self.record_status_outcome(update, launcher_job, original)
        self.status = update.status
        # Settled: a sync with this status and the same children writes nothing (the status
        # is a function of the children, and each condition is set once). Not when it
        # finishes the job (the next sync cleans up, as upstream's does) or is suspended.
        # A change of counts alone waits while the next is due (pods starting, the launcher
        # Job about to finish): decisions.counts_hold.
        await self.write_status(update.status, original,
                                settled=not is_finished(update.status)
                                and not decisions.is_suspended(self.job),
                                hold_for=decisions.counts_hold(launcher_job, launcher_pods,
                                                               workers))

    async def finished(self, cleanup: bool, original: Mapping[str, Any]) -> None:
        """A finished job (module doc, step 1): with cleanPodPolicy All or Running its workers (and,
        with the gates, its launcher's pods) go; then the status write (upstream writes only
        after a cleanup; an unchanged status is never written) and, with the opt-ins, the
        TTL."""
        launcher_job = self.ctx.cached(self.kind.jobs, naming.launcher_name(self.name))
        if cleanup:
            await self.clean_up_workers()
            if launcher_job is not None:
                await self.clean_up_launcher(launcher_job)
        self.status = self.job["status"]
        await self.write_status(self.job["status"], original)
        await self.apply_ttl(launcher_job)

    # -- children --------------------------------------------------------------------------

    async def ensure_children(self) -> list[Obj]:
        kind, writer, job = self.kind, self.writer, self.job
        pods = self.job_pods()
        desired_cm = configmap.desired_config_map(
            job, pods, cluster_domain=self.options.cluster_domain)
        existing_service = self.ctx.cached(kind.services, naming.service_name(self.name))
        desired_service = service.new_job_service(job)
        existing_cm = self.ctx.cached(kind.config_maps, naming.config_map_name(self.name))
        if existing_cm is not None and self.ctx.hold_child(
                naming.DISCOVER_HOSTS_SCRIPT_NAME,
                decisions.hosts_hold(job, existing_cm, desired_cm, pods)):
            desired_cm = existing_cm  # hosts added wait for the workers still starting
        existing_secret = self.ctx.cached(kind.secrets, naming.ssh_secret_name(self.name))
        if not (writer.in_line(existing_service, desired_service, service.service_needs_update)
                and writer.in_line(existing_cm, desired_cm, configmap.config_map_needs_update)
                and existing_secret is not None and is_controlled_by(existing_secret, job)
                and not secret.ssh_secret_needs_update(existing_secret)):
            # Independent of each other: one round trip instead of three (all finish before
            # the first error is raised, so a retry finds whichever were created in the cache).
            # When all three are ours and in line, none writes, raises or records anything:
            # the three tasks are not made.
            await gather_raising(
                writer.ensure(SERVICES, existing_service, desired_service,
                              needs_update=service.service_needs_update,
                              apply_update=service.update_service),
                writer.ensure(CONFIGMAPS, existing_cm, desired_cm,
                              needs_update=configmap.config_map_needs_update,
                              apply_update=configmap.update_config_map),
                self.ensure_secret())
        if decisions.is_suspended(job):
            return []
        await self.ensure_pod_group()
        return await self.ensure_workers()

    async def ensure_secret(self) -> None:
        existing = self.ctx.cached(self.kind.secrets, naming.ssh_secret_name(self.name))
        if existing is None:
            await self.writer.create(SECRETS, secret.new_ssh_auth_secret(self.job))
            return
        self.writer.check_controlled(existing, SECRETS.kind)
        if secret.ssh_secret_needs_update(existing):
            await self.writer.update(SECRETS, secret.update_ssh_auth_secret(existing))

    async def ensure_pod_group(self) -> None:
        kind = self.kind
        if kind.pod_groups is None or kind.priority_classes is None:
            return
        assert kind.pod_group_resource is not None
        priorities = gang.priority_class_values(kind.priority_classes.indexer.list())
        workers_only = (self.features.gang_wait_for_workers_ready
                        and decisions.launcher_waits_for_workers(self.job))
        desired = gang.new_pod_group(self.job, gang_scheduling=self.options.gang_scheduling,
                                     priority_classes=priorities, workers_only=workers_only)
        if desired is None:
            return
        existing = self.ctx.cached(kind.pod_groups, naming.pod_group_name(self.name))
        await self.writer.ensure(kind.pod_group_resource, existing, desired,
                                 needs_update=gang.pod_group_needs_update,
                                 apply_update=gang.update_pod_group)

    def worker_replicas(self) -> int | None:
        spec = as_dict(as_record(self.job["spec"].get("mpiReplicaSpecs")).get(
            constants.REPLICA_TYPE_WORKER))
        if not spec:
            return None
        return int(spec.get("replicas") or 0)

    async def ensure_workers(self) -> list[Obj]:
        replicas = self.worker_replicas()
        if replicas is None:
            return []
        concurrency = self.options.worker_create_concurrency
        existing = [p for p in naming.worker_pods(self.job, self.job_pods())
                    if not (p.get("metadata") or {}).get("deletionTimestamp")]
        if len(existing) > replicas:
            plan = decisions.plan_worker_scale_down(self.job, existing)
            names = [p["metadata"]["name"] for p in plan.delete]
            await self.writer.delete_many(PODS, names, concurrency=concurrency)
        workers: list[Obj | None] = []
        missing: list[int] = []
        for index in range(replicas):
            pod = self.ctx.cached(self.kind.pods, naming.worker_name(self.name, index))
            if pod is None:
                missing.append(index)
            else:
                self.writer.check_controlled(pod, PODS.kind)
            workers.append(pod)
        if missing:
            desired = [worker.new_worker(self.job, i, gang_scheduling=self.options.gang_scheduling)
                       for i in missing]
            created, errors = await self.writer.create_many(PODS, desired,
                                                            concurrency=concurrency)
            if errors:
                self.ctx.emit(events.worker_create_failed_event(go_error_text(errors[0])))
                raise errors[0]
            for index, pod in zip(missing, created, strict=True):
                workers[index] = pod
        return [p for p in workers if p is not None]

    async def create_launcher(self) -> Obj:
        for event in launcher.launcher_template_events(self.job):
            self.ctx.emit(event)
        desired = launcher.new_launcher_job(self.job,
                                            gang_scheduling=self.options.gang_scheduling)
        try:
            return await self.writer.create(JOBS, desired)
        except ApiError as err:
            self.ctx.emit(events.launcher_create_failed_event(go_error_text(err)))
            raise

    async def sync_launcher_suspension(self, launcher_job: Obj, workers: list[Obj]) -> Obj:
        hold = decisions.hold_launcher(self.job, workers,
                                       on_resume=self.features.launcher_waits_on_resume)
        action = decisions.launcher_suspension_action(self.job, launcher_job, hold=hold)
        if action == "suspend":
            return await self.writer.update(JOBS, launcher.suspend_launcher(launcher_job))
        if action != "resume":
            return launcher_job
        cleared = launcher.clear_launcher_start_time(launcher_job)
        if cleared is not None:
            launcher_job = await self.writer.update_status(JOBS, cleared)
        for event in launcher.launcher_template_events(self.job):
            self.ctx.emit(event)
        resumed = launcher.resume_launcher(launcher_job, self.job,
                                           gang_scheduling=self.options.gang_scheduling)
        return await self.writer.update(JOBS, resumed)

    async def clean_up_workers(self) -> None:
        pods = {p["metadata"]["name"]: p for p in naming.worker_pods(self.job, self.job_pods())}
        plan = decisions.plan_worker_cleanup(self.job, pods)
        names = [n for n in plan.delete if not pods[n]["metadata"].get("deletionTimestamp")]
        await self.writer.delete_many(PODS, names,
                                      concurrency=self.options.worker_create_concurrency)
        if plan.error is not None:
            self.ctx.emit(Event(WARNING, constants.EVENT_ERR_RESOURCE_EXISTS, plan.error))
            raise ResourceNotControlled(plan.error)
        if self.kind.pod_groups is not None:
            await self.delete_pod_group()
        self.job["status"] = status.clean_up_worker_status(self.job.get("status") or {})

    async def delete_pod_group(self) -> None:
        existing = self.ctx.cached(self.kind.pod_groups, naming.pod_group_name(self.name))
        if existing is None:
            return
        assert self.kind.pod_group_resource is not None
        self.writer.check_controlled(existing, "PodGroup")
        await self.writer.delete(self.kind.pod_group_resource, naming.pod_group_name(self.name))

    async def clean_up_launcher(self, launcher_job: Obj) -> None:
        """Opt-ins for a finished job's launcher (cleanPodPolicy All or Running): a launcher
        Job still running after its workers were evicted is suspended (the Job controller
        deletes its pod; ``CleanUpEvictedJobs``), and with ``All`` the launcher Job's pods
        are deleted (``CleanPodPolicyAllLauncher``)."""
        if (self.features.clean_up_evicted_jobs
                and decisions.is_evicted(self.job.get("status") or {})
                and not decisions.is_job_finished(launcher_job)
                and not decisions.is_job_suspended(launcher_job)):
            await self.writer.update(JOBS, launcher.suspend_launcher(launcher_job))
        policy = parse_mpi_job(self.job).spec.run_policy.clean_pod_policy
        if self.features.clean_pod_policy_all_launcher and policy == constants.CLEAN_POD_POLICY_ALL:
            pods = decisions.select_job_pods(launcher_job, self.job_pods())
            names = [p["metadata"]["name"] for p in pods
                     if not p["metadata"].get("deletionTimestamp")]
            await self.writer.delete_many(PODS, names, expect=False,
                                          concurrency=self.options.worker_create_concurrency)

    async def apply_ttl(self, launcher_job: Obj | None) -> None:
        """``ttlSecondsAfterFinished`` counted from the job's completionTime, where the
        controller applies it: with ``mpi-controller.io/ttl-deletes: MPIJob`` the MPIJob is
        deleted; with ``CleanUpEvictedJobs`` an evicted job's launcher Job, which never
        finishes on its own, is. Before then the job is synced again when the TTL runs out.
        (Otherwise the Job TTL controller applies the TTL to the finished launcher Job.)"""
        remaining = decisions.ttl_remaining(self.job, self.ctx.now())
        if remaining is None:
            return
        if features.ttl_deletes_mpijob(self.job):
            if remaining > 0:
                self.ctx.requeue_after(remaining)
                return
            self.ctx.emit(events.job_deleted_event(self.name))
            await self.ctx.delete_job()
            return
        if (self.features.clean_up_evicted_jobs and launcher_job is not None
                and decisions.is_evicted(self.job.get("status") or {})
                and not decisions.is_job_finished(launcher_job)):
            if remaining > 0:
                self.ctx.requeue_after(remaining)
                return
            await self.writer.delete(JOBS, naming.launcher_name(self.name),
                                     propagation_policy="Background")

    # -- status ----------------------------------------------------------------------------

    async def write_status(self, new_status: Mapping[str, Any],
                           original: Mapping[str, Any], *, settled: bool = False,
                           hold_for: float | None = None) -> None:
        """Write the status (unless unchanged), with the opt-ins' additions and metrics;
        ``settled`` as :meth:`SyncContext.write_status`; ``hold_for``: a change of replica
        counts alone may wait that many seconds (``None``: it is written at once)."""
        if self.features.scale_selector:
            new_status = status.with_worker_selector(new_status, self.job)
        await self.ctx.write_status(new_status, original, settled=settled,
                                    hold=hold_for is not None, hold_for=hold_for)
        # Not for a job deleted meanwhile: its series were dropped when it left the cache (no
        # await between this check and the recording, so the deletion cannot come in between).
        if self.features.job_metrics and self.ctx.job_still_cached():
            self.record_job_metrics(new_status, original)

    def record_job_metrics(self, new_status: Mapping[str, Any],
                           original: Mapping[str, Any]) -> None:
        """``JobMetrics``: the job's phase; its duration once, when its finished status (with
        start and completion times) has been written."""
        namespace = self.ctx.namespace
        self.kind.phases.observe(self.ctx.key, namespace, status.job_phase(new_status))
        if is_finished(original) and original.get("completionTime") is not None:
            return  # observed when that status was written
        start = parse_time(new_status.get("startTime"))
        end = parse_time(new_status.get("completionTime"))
        if start is None or end is None or not is_finished(new_status):
            return
        result = (constants.CONDITION_SUCCEEDED if is_succeeded(new_status)
                  else constants.CONDITION_FAILED)
        metrics.JOB_DURATION.labels(namespace, result).observe(
            max((end - start).total_seconds(), 0.0))

    def record_status_outcome(self, update: status.StatusUpdate, launcher_job: Obj | None,
                              original_status: Mapping[str, Any]) -> None:
        running = get_condition(original_status, constants.CONDITION_RUNNING)
        was_running = running is not None and running.get("status") == "True"
        for event in update.events:
            # The Go operator records MPIJobRunning on every sync of a running job; here only
            # when the job starts running (a restarted controller would write one per job).
            if was_running and event.reason == constants.EVENT_MPIJOB_RUNNING:
                continue
            self.ctx.emit(event)
        if update.launcher_succeeded:
            metrics.JOBS_SUCCESSFUL.inc()
        if update.launcher_failed:
            metrics.JOBS_FAILED.inc()
        if launcher_job is not None and (not self.features.job_metrics
                                         or self.ctx.job_still_cached()):
            metrics.JOB_INFO.labels(launcher=naming.launcher_name(self.name),
                                    namespace=self.ctx.namespace).set(1)
