"""MPIJobController: informers → work queue → ``sync(key)``, the I/O around ``reconcile``.

Informers (narrowed by labels where that is safe; ``metadata.managedFields`` dropped):

* MPIJobs (all);
* Pods with ``training.kubeflow.org/operator-name=mpi-operator`` (workers, and launcher pods,
  whose template carries the label), decoded and cached as ``mpi_controller.podcache`` slims
  them (only the fields the controller reads);
* batch Jobs, Services, ConfigMaps and Secrets with an ``app`` label (every child carries
  ``app: <job>``); an object without it is found when a create answers AlreadyExists;
* with gang scheduling, PodGroups and PriorityClasses.

A child's add/update/delete enqueues its controlling MPIJob (launcher pods through their Job),
as the Go operator's ``handleObject`` does; updates with an unchanged resourceVersion are
ignored. Pod updates (phase and readiness changes) enqueue after ``pod_update_batch`` seconds
(default 1 s, like the Kubernetes Job controller's batch period), so the workers of a job that
start together cost one status write and one ConfigMap update instead of one per worker; adds
and deletes enqueue at once (expectations wait for them). ``sync`` follows the Go operator's
``syncHandler`` step by step (see ``shared/reference`` section 3); each decision is a pure
function of ``mpi_controller.reconcile``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from mpi_controller import jobmetrics
from mpi_controller import reconcile as r
from mpi_controller.api import constants as c
from mpi_controller.api import set_defaults, validate
from mpi_controller.api.jsonvalue import json_copy
from mpi_controller.children import (
    ChildWriter,
    OwnerGone,
    ResourceNotControlled,
    Vanished,
    gather_raising,
)
from mpi_controller.podcache import POD_CODEC, slim_pod
from mpi_controller.runtime.cache import (
    CONTROLLER_UID_INDEX,
    DeletedFinalStateUnknown,
    controller_uid_index,
    deletion_handling_key,
    meta_namespace_key,
    split_key,
)
from mpi_controller.runtime.client import (
    CONFIGMAPS,
    JOBS,
    PODS,
    PRIORITY_CLASSES,
    SECRETS,
    SERVICES,
    ApiError,
    KubeClient,
    Resource,
)
from mpi_controller.runtime.clock import Clock, LoopClock
from mpi_controller.runtime.controller import Controller, Result
from mpi_controller.runtime.events import EventRecorder
from mpi_controller.runtime.expectations import ControllerExpectations
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer
from mpi_controller.runtime.ratelimit import default_controller_rate_limiter
from mpi_controller.runtime.workqueue import RateLimitingQueue

__all__ = ["MPIJOBS", "ControllerConfig", "MPIJobController"]

MPIJOBS = Resource(c.GROUP, c.VERSION, c.PLURAL, namespaced=True, kind=c.KIND)
_log = structlog.get_logger(__name__)
Obj = dict[str, Any]
STATUS_WRITE_WAIT = 10.0
"""Seconds a sync waits for the informer to deliver the controller's own last status write."""


@dataclass(frozen=True)
class ControllerConfig:
    namespace: str = ""
    gang_scheduling: str = ""
    cluster_domain: str = ""
    threadiness: int = 2
    queue_qps: float = 10.0
    queue_burst: int = 100
    worker_create_concurrency: int = 16
    pod_update_batch: float = 1.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


class MPIJobController:
    """Reconciles MPIJobs; ``controller`` is the runtime Controller to hand to a Manager."""

    def __init__(
        self,
        client: KubeClient,
        factory: InformerFactory,
        recorder: EventRecorder,
        config: ControllerConfig,
        *,
        clock: Clock | None = None,
        wall: Callable[[], datetime] = _utcnow,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._config = config
        self._wall = wall
        self._expectations = ControllerExpectations(clock=clock)
        self._clock: Clock = clock or LoopClock()
        self._superseded: dict[str, tuple[str, float]] = {}
        self._vanished = Vanished()
        ns = config.namespace or None
        selector = f"{c.OPERATOR_NAME_LABEL}={c.OPERATOR_NAME}"
        self.mpijobs = factory.informer_for(MPIJOBS, ns)
        self.pods = factory.informer_for(
            PODS, ns, label_selector=selector, transform=slim_pod, codec=POD_CODEC,
            indexers={CONTROLLER_UID_INDEX: controller_uid_index})
        self.jobs = factory.informer_for(JOBS, ns, label_selector="app")
        self.services = factory.informer_for(SERVICES, ns, label_selector="app")
        self.config_maps = factory.informer_for(CONFIGMAPS, ns, label_selector="app")
        self.secrets = factory.informer_for(SECRETS, ns, label_selector="app")
        self.pod_group_api = r.pod_group_api(config.gang_scheduling)
        self.pod_groups: SharedIndexInformer | None = None
        self.priority_classes: SharedIndexInformer | None = None
        if self.pod_group_api is not None:
            api = self.pod_group_api
            self.pod_group_resource = Resource(api.group, api.version, api.plural, True, api.kind)
            self.pod_groups = factory.informer_for(self.pod_group_resource, ns)
            self.priority_classes = factory.informer_for(PRIORITY_CLASSES)
        queue: RateLimitingQueue[str] = RateLimitingQueue(
            default_controller_rate_limiter(config.queue_qps, config.queue_burst, clock=clock),
            name="MPIJob", clock=clock)
        self.controller = Controller("MPIJob", self.sync, queue=queue,
                                     workers=config.threadiness, clock=clock)
        self._register_handlers()

    # -- event handlers ------------------------------------------------------------------

    def informers(self) -> list[SharedIndexInformer]:
        extra = [i for i in (self.pod_groups, self.priority_classes) if i is not None]
        return [self.mpijobs, self.pods, self.jobs, self.services, self.config_maps,
                self.secrets, *extra]

    def _register_handlers(self) -> None:
        self.mpijobs.add_event_handler(
            on_add=self._enqueue_job, on_update=lambda _old, new: self._enqueue_job(new),
            on_delete=self._forget_job)
        for informer in self.informers()[1:]:
            informer.add_event_handler(
                on_add=self._child_added,
                on_update=self._pod_updated if informer is self.pods else self._child_updated,
                on_delete=self._deletion_handler(
                    informer.resource.kind if informer.resource else ""))

    def _enqueue_job(self, obj: Obj) -> None:
        self.controller.enqueue(meta_namespace_key(obj))

    def _forget_job(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        key = deletion_handling_key(obj)
        self._expectations.delete_expectations(key)
        self._superseded.pop(key, None)
        self._vanished.forget(key)

    def _owner_key(self, obj: Mapping[str, Any]) -> tuple[str | None, bool]:
        """The controlling MPIJob's key, and whether the MPIJob controls ``obj`` directly."""
        ref = r.get_controller_of(obj)
        if ref is None:
            return None, False
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace", "")
        direct = True
        if ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith("batch/"):
            launcher = self.jobs.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
            ref = r.get_controller_of(launcher) if launcher else None
            direct = False
            if ref is None:
                return None, False
        if ref.get("apiVersion") != c.API_VERSION or ref.get("kind") != c.KIND:
            return None, False
        key = f"{namespace}/{ref.get('name')}"
        if self.mpijobs.indexer.get_by_key(key) is None:
            return None, False
        return key, direct

    def _child_added(self, obj: Obj) -> None:
        key, direct = self._owner_key(obj)
        if key is not None:
            if direct:
                self._expectations.creation_observed(key)
            self.controller.enqueue(key)

    def _child_updated(self, old: Obj, new: Obj, *, batch: float = 0.0) -> None:
        old_rv = (old.get("metadata") or {}).get("resourceVersion")
        if old_rv == (new.get("metadata") or {}).get("resourceVersion"):
            return
        key, _ = self._owner_key(new)
        if key is None:
            return
        if batch > 0:
            self.controller.enqueue_after(key, batch)
        else:
            self.controller.enqueue(key)

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        self._child_updated(old, new, batch=self._config.pod_update_batch)

    def _deletion_handler(self, kind: str) -> Callable[[Obj | DeletedFinalStateUnknown], None]:
        def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
            target = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            key, direct = self._owner_key(target)
            if key is None:
                return
            if direct:
                self._expectations.deletion_observed(key)
                self._vanished.deleted(key, kind, (target.get("metadata") or {}).get("name", ""))
            self.controller.enqueue(key)
        return on_delete

    # -- sync ----------------------------------------------------------------------------

    async def sync(self, key: str) -> Result | None:
        namespace, name = split_key(key)
        cached = self.mpijobs.indexer.get_by_key(key)
        if cached is None:
            return None
        if self._status_pending(key, cached):
            # Our last status write replaced this version; its result is on its way through
            # the informer (which enqueues the key). Syncing now would write on a stale
            # resourceVersion and only earn a conflict.
            _log.debug("waiting for the cache to see the last status write", key=key)
            return None
        job = set_defaults(cached)  # a deep copy: the cached object is never changed
        if r.managed_by_external_controller(job) is not None:
            return None
        if (job.get("metadata") or {}).get("deletionTimestamp"):
            return None
        errors = validate(job)
        if errors:
            self._emit(job, r.validation_error_event(errors))
            return None
        if not self._expectations.satisfied_expectations(key):
            _log.debug("waiting for the cache to see earlier writes", key=key)
            return None
        self._expectations.set_expectations(key, add=0, delete=0)
        sync = _JobSync(self, job, key, namespace=namespace, name=name)
        try:
            await sync.run(original_status=cached.get("status") or {})
        except OwnerGone as gone:
            # Children were deleted (by the garbage collector) before the cache saw the job's
            # own deletion; the MPIJob informer's delete event follows.
            _log.info("job deleted; not recreating its children", key=key, reason=str(gone))
        except ApiError as err:
            if not err.is_conflict():
                raise
            # The object changed since the cache read: its newer version is on its way through
            # the informer and will enqueue the key again; no backoff needed.
            _log.debug("conflict; waiting for the newer version", key=key, error=str(err))
        return None

    def _status_written(self, key: str, replaced_version: str) -> None:
        self._superseded[key] = (replaced_version, self._clock.now())

    def _status_pending(self, key: str, cached: Mapping[str, Any]) -> bool:
        """Whether the cache still holds the version the last status write replaced (for at
        most ``STATUS_WRITE_WAIT`` seconds, so a lost event cannot stall the job)."""
        entry = self._superseded.get(key)
        if entry is None:
            return False
        version, at = entry
        current = (cached.get("metadata") or {}).get("resourceVersion")
        if current != version or self._clock.now() - at > STATUS_WRITE_WAIT:
            del self._superseded[key]
            return False
        return True

    def _emit(self, job: Mapping[str, Any], event: r.Event) -> None:
        self._recorder.event(job, event.type, event.reason, event.message)


class _JobSync:
    """One sync of one MPIJob (steps 7 to 15 of the Go operator's ``syncHandler``)."""

    def __init__(self, ctl: MPIJobController, job: Obj, key: str, *, namespace: str,
                 name: str) -> None:
        self.ctl = ctl
        self.cfg = ctl._config
        self.job = job
        self.key = key
        self.namespace = namespace
        self.name = name
        self.writer = ChildWriter(ctl._client, ctl._expectations, job=job, key=key,
                                  emit=lambda e: ctl._emit(job, e), owner=MPIJOBS,
                                  owner_cached=self.job_still_cached, vanished=ctl._vanished)

    def emit(self, event: r.Event) -> None:
        self.ctl._emit(self.job, event)

    def job_still_cached(self) -> bool:
        """The MPIJob this sync works on is still in the cache (same uid)."""
        cached = self.ctl.mpijobs.indexer.get_by_key(self.key)
        uid = self.job["metadata"].get("uid")
        return cached is not None and (cached.get("metadata") or {}).get("uid") == uid

    def cached(self, informer: SharedIndexInformer | None, name: str) -> Obj | None:
        if informer is None:
            return None
        return informer.indexer.get_by_key(f"{self.namespace}/{name}")

    def job_pods(self) -> list[Obj]:
        uid = self.job["metadata"].get("uid", "")
        launcher = self.cached(self.ctl.jobs, r.launcher_name(self.name))
        pods = list(self.ctl.pods.indexer.by_index(CONTROLLER_UID_INDEX, uid))
        if launcher is not None:
            launcher_uid = launcher["metadata"].get("uid", "")
            pods += self.ctl.pods.indexer.by_index(CONTROLLER_UID_INDEX, launcher_uid)
        return pods

    async def run(self, *, original_status: Mapping[str, Any]) -> None:
        now = self.ctl._wall()
        status, events = r.mark_created(self.job, now=now)
        self.job["status"] = status
        for event in events:
            jobmetrics.JOBS_CREATED.inc()
            self.emit(event)
        cleanup = r.needs_finished_cleanup(self.job)
        if cleanup is not None:
            if cleanup:
                await self.clean_up_workers()
                await self.write_status(self.job["status"], original_status)
            return
        self.job["status"] = r.mark_started(self.job, now=now)
        launcher = self.cached(self.ctl.jobs, r.launcher_name(self.name))
        if launcher is not None:
            self.writer.check_controlled(launcher, JOBS.kind)
        workers: list[Obj] = []
        if not r.is_job_finished(launcher):
            workers = await self.ensure_children()
            if launcher is None and r.should_create_launcher(self.job, workers):
                launcher = await self.create_launcher()
        if launcher is not None:
            launcher = await self.sync_launcher_suspension(launcher)
        if r.is_suspended(self.job):
            await self.clean_up_workers()
        update = r.update_mpi_job_status(
            self.job, launcher=launcher,
            launcher_pods=r.select_job_pods(launcher, self.job_pods()) if launcher else (),
            workers=workers, now=self.ctl._wall())
        self.record_status_outcome(update, launcher, original_status)
        await self.write_status(update.status, original_status)

    # -- children --------------------------------------------------------------------------

    async def ensure_children(self) -> list[Obj]:
        ctl, w, job = self.ctl, self.writer, self.job
        desired_cm = r.desired_config_map(job, self.job_pods(),
                                          cluster_domain=self.cfg.cluster_domain)
        # Independent of each other: one round trip instead of three (all finish before the
        # first error is raised, so a retry finds whichever were created in the cache).
        await gather_raising(
            w.ensure(SERVICES, self.cached(ctl.services, r.service_name(self.name)),
                     r.new_job_service(job), needs_update=r.service_needs_update,
                     apply_update=r.update_service),
            w.ensure(CONFIGMAPS, self.cached(ctl.config_maps, r.config_map_name(self.name)),
                     desired_cm, needs_update=r.config_map_needs_update,
                     apply_update=r.update_config_map),
            self.ensure_secret())
        if r.is_suspended(job):
            return []
        await self.ensure_pod_group()
        return await self.ensure_workers()

    async def ensure_secret(self) -> None:
        existing = self.cached(self.ctl.secrets, r.ssh_secret_name(self.name))
        if existing is None:
            await self.writer.create(SECRETS, r.new_ssh_auth_secret(self.job))
            return
        self.writer.check_controlled(existing, SECRETS.kind)
        if r.ssh_secret_needs_update(existing):
            await self.writer.update(SECRETS, r.update_ssh_auth_secret(existing))

    async def ensure_pod_group(self) -> None:
        if self.ctl.pod_groups is None or self.ctl.priority_classes is None:
            return
        priorities = r.priority_class_values(self.ctl.priority_classes.indexer.list())
        desired = r.new_pod_group(self.job, gang_scheduling=self.cfg.gang_scheduling,
                                  priority_classes=priorities)
        if desired is None:
            return
        existing = self.cached(self.ctl.pod_groups, r.pod_group_name(self.name))
        await self.writer.ensure(self.ctl.pod_group_resource, existing, desired,
                                 needs_update=r.pod_group_needs_update,
                                 apply_update=r.update_pod_group)

    def worker_replicas(self) -> int | None:
        spec = (self.job["spec"].get("mpiReplicaSpecs") or {}).get(c.REPLICA_TYPE_WORKER)
        if not spec:
            return None
        return int(spec.get("replicas") or 0)

    async def ensure_workers(self) -> list[Obj]:
        replicas = self.worker_replicas()
        if replicas is None:
            return []
        existing = [p for p in r.worker_pods(self.job, self.job_pods())
                    if not (p.get("metadata") or {}).get("deletionTimestamp")]
        if len(existing) > replicas:
            plan = r.plan_worker_scale_down(self.job, existing)
            names = [p["metadata"]["name"] for p in plan.delete]
            await self.writer.delete_many(PODS, names,
                                          concurrency=self.cfg.worker_create_concurrency)
        workers: list[Obj | None] = []
        missing: list[int] = []
        for index in range(replicas):
            pod = self.cached(self.ctl.pods, r.worker_name(self.name, index))
            if pod is None:
                missing.append(index)
            else:
                self.writer.check_controlled(pod, PODS.kind)
            workers.append(pod)
        if missing:
            desired = [r.new_worker(self.job, i, gang_scheduling=self.cfg.gang_scheduling)
                       for i in missing]
            created, errors = await self.writer.create_many(
                PODS, desired, concurrency=self.cfg.worker_create_concurrency)
            if errors:
                self.emit(r.worker_create_failed_event(errors[0]))
                raise errors[0]
            for index, pod in zip(missing, created, strict=True):
                workers[index] = pod
        return [p for p in workers if p is not None]

    async def create_launcher(self) -> Obj:
        for event in r.launcher_template_events(self.job):
            self.emit(event)
        desired = r.new_launcher_job(self.job, gang_scheduling=self.cfg.gang_scheduling)
        try:
            return await self.writer.create(JOBS, desired)
        except ApiError as err:
            self.emit(r.launcher_create_failed_event(err))
            raise

    async def sync_launcher_suspension(self, launcher: Obj) -> Obj:
        action = r.launcher_suspension_action(self.job, launcher)
        if action == "suspend":
            return await self.writer.update(JOBS, r.suspend_launcher(launcher))
        if action != "resume":
            return launcher
        cleared = r.clear_launcher_start_time(launcher)
        if cleared is not None:
            launcher = await self.writer.update_status(JOBS, cleared)
        for event in r.launcher_template_events(self.job):
            self.emit(event)
        resumed = r.resume_launcher(launcher, self.job, gang_scheduling=self.cfg.gang_scheduling)
        return await self.writer.update(JOBS, resumed)

    async def clean_up_workers(self) -> None:
        pods = {p["metadata"]["name"]: p for p in r.worker_pods(self.job, self.job_pods())}
        plan = r.plan_worker_cleanup(self.job, pods)
        names = [n for n in plan.delete if not pods[n]["metadata"].get("deletionTimestamp")]
        await self.writer.delete_many(PODS, names, concurrency=self.cfg.worker_create_concurrency)
        if plan.error is not None:
            self.emit(r.Event(c.EVENT_TYPE_WARNING, c.EVENT_ERR_RESOURCE_EXISTS, plan.error))
            raise ResourceNotControlled(plan.error)
        if self.ctl.pod_groups is not None:
            await self.delete_pod_group()
        self.job["status"] = r.clean_up_worker_status(self.job.get("status") or {})

    async def delete_pod_group(self) -> None:
        existing = self.cached(self.ctl.pod_groups, r.pod_group_name(self.name))
        if existing is None:
            return
        self.writer.check_controlled(existing, "PodGroup")
        await self.writer.delete(self.ctl.pod_group_resource, r.pod_group_name(self.name))

    # -- status ----------------------------------------------------------------------------

    def record_status_outcome(self, update: r.StatusUpdate, launcher: Obj | None,
                              original_status: Mapping[str, Any]) -> None:
        running = r.get_condition(original_status, c.CONDITION_RUNNING)
        was_running = running is not None and running.get("status") == "True"
        for event in update.events:
            # The Go operator records MPIJobRunning on every sync of a running job; here only
            # when the job starts running (a restarted controller would write one per job).
            if was_running and event.reason == c.EVENT_MPIJOB_RUNNING:
                continue
            self.emit(event)
        if update.launcher_succeeded:
            jobmetrics.JOBS_SUCCESSFUL.inc()
        if update.launcher_failed:
            jobmetrics.JOBS_FAILED.inc()
        if launcher is not None:
            jobmetrics.JOB_INFO.labels(launcher=r.launcher_name(self.name),
                                       namespace=self.namespace).set(1)

    async def write_status(self, status: Mapping[str, Any],
                           original: Mapping[str, Any]) -> None:
        if status == original:
            return
        body = json_copy(self.job)
        body["status"] = dict(status)
        body["metadata"].pop("managedFields", None)
        await self.writer.update_status(MPIJOBS, body)
        replaced = body["metadata"].get("resourceVersion")
        if replaced:
            self.ctl._status_written(self.key, replaced)

