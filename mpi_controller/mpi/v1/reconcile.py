"""MPIJobs created as ``kubeflow.org/v1`` run as training-operator v1.9 ran them: its common job
engine (:mod:`mpi_controller.engine.training`) with the MPI reconciler's own pods
(``pkg/controller.v1/mpi``). The MPIJob kind (:mod:`mpi_controller.mpi.kind`) hands such jobs
to :class:`MPIJobV1Mode`; they are stored as ``v2beta1``, so the mode reads each one back as
the ``v1`` object it was written as (:func:`~mpi_controller.mpi.conversion.convert`, once per
stored version of the job) and defaults it with the hooks of :mod:`.hooks`. A job whose
``runPolicy.managedBy`` is set to anything but ``kubeflow.org/training-operator`` is left
alone (upstream skips it before validating); an invalid job gets ``MPIJobFailedValidation``:
``MPIJob failed validation because <message>`` with upstream's messages
(:func:`mpi_controller.mpi.v1.validate`); the Events' source is ``mpijob-controller``.

The engine runs ``ReconcileJobs`` (created, finished and cleanPodPolicy, suspension, backoff
limit and deadline, gang scheduling, TTL); :class:`MPIJobV1Reconcile` replaces its per-replica pods
(and Services: the MPI reconciler has none) with the MPI reconciler's ``ReconcilePods``:

1. the launcher pod ``<job>-launcher`` must be the job's; while it has not finished:
2. the ServiceAccount (the template's or ``<job>-launcher``; one that exists is used whoever
   owns it; one outside the cache, which holds the accounts with an ``app`` label, is found
   by its create's AlreadyExists and then trusted for :data:`FOREIGN_ACCOUNT_RECHECK` before
   the next create), the ConfigMap (updated when its data changes: ``discover_hosts.sh`` follows the
   Running workers), the Role (updated when its rules change: the workers it may exec into)
   then the RoleBinding, the three concurrently;
3. workers beyond ``Worker.replicas`` deleted, missing ones created (``SuccessfulCreatePod``
   ``Created worker pod: <name>``);
4. the launcher pod created (``MPIJobRunning`` ``launcher pod created success: <name>``, or
   ``MPIJobFailed`` ``launcher pod created failed: <error>``);
5. the replica counts and their Events (:func:`.status.count_replicas`).

Events upstream records on every reconcile are recorded once per job (while this process
runs): ``ServiceAccount is exist``, ``LauncherRole is exist``, ``RoleBinding is exist`` (when
the object is found existing) and ``MPIJobRunning`` ``MPIJob <ns>/<name> is running``.

Children's controller references name ``kubeflow.org/v2beta1`` (the version stored and read),
so the garbage collector never needs the conversion webhook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from mpi_controller.engine.gather import gather_raising
from mpi_controller.engine.kind import KindInformers
from mpi_controller.engine.training.api import KUBEFLOW_JOBS_CONTROLLER, run_policy
from mpi_controller.engine.training.framework import TrainingOptions
from mpi_controller.engine.training.kind import TrainingJobKind
from mpi_controller.engine.training.reconcile import TrainingReconcile
from mpi_controller.engine.training.replicas import by_type, replica_index
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_list, as_record, as_str
from mpi_controller.kube.owners import is_controlled_by
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.resources import (
    CONFIGMAPS,
    PODS,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
)
from mpi_controller.mpi import constants, kubexec
from mpi_controller.mpi.conversion.memo import ConvertedJobs
from mpi_controller.mpi.options import MPIJOBS, MPIJobOptions
from mpi_controller.mpi.v1 import launch
from mpi_controller.mpi.v1.hooks import MPIJobV1
from mpi_controller.mpi.v1.status import count_replicas
from mpi_controller.mpi.v1.validation import validate
from mpi_controller.runtime.errors import ApiError
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = ["MPIJobV1Mode", "MPIJobV1Reconcile"]

VERSION = "v1"
FINISHED = ("Succeeded", "Failed")


class MPIJobV1Reconcile(TrainingReconcile):
    """One reconcile of a ``v1`` MPIJob: the engine's, with the MPI reconciler's pods (module
    doc)."""

    kind: MPIJobV1Mode

    def report_once(self, event: Event) -> None:
        """Record ``event`` the first time this job reports it (while this process runs)."""
        self.report(as_str(as_record(self.job.get("metadata")).get("uid")), event)

    async def reconcile_replicas(self, pods: list[Obj]) -> None:
        launcher = self.ctx.cached(self.kind.pods, kubexec.launcher_name(self.name))
        if launcher is not None:
            self.writer.check_controlled(launcher, PODS.kind)
        workers: list[Obj] = []
        if launcher is None or pod_phase(launcher) not in FINISHED:
            await gather_raising(self.ensure_service_account(), self.ensure_config_map(pods),
                                 self.ensure_role_then_binding())
            workers = await self.ensure_workers(pods)
            if launcher is None:
                launcher = await self.create_launcher()
        statuses, events = count_replicas(self.ctx.key, launcher, workers)
        self.status["replicaStatuses"] = statuses
        for event in events:
            if event.reason == constants.REASON_MPIJOB_RUNNING:
                self.report_once(event)
            else:
                self.ctx.emit(event)

    # -- the launcher's identity and configuration ----------------------------------------

    async def ensure_service_account(self) -> None:
        name = launch.service_account_name(self.job)
        exists = Event(NORMAL, "ServiceAccount is exist", f"ServiceAccount: {name}")
        if self.ctx.cached(self.kind.service_accounts, name) is not None:
            self.report_once(exists)
            return
        now = self.ctx.now()
        seen = self.kind.foreign_accounts.get(self.ctx.key)
        if seen is not None and seen[0] == name and now - seen[1] < FOREIGN_ACCOUNT_RECHECK:
            return
        desired = kubexec.new_launcher_service_account(self.name, self.ctx.namespace,
                                                  owner_ref=self.owner_ref, name=name)
        account = await self.writer.create(SERVICE_ACCOUNTS, desired, foreign_ok=True)
        if not is_controlled_by(account, self.job):
            self.kind.foreign_accounts[self.ctx.key] = (name, now)
            self.report_once(exists)

    async def ensure_config_map(self, pods: Sequence[Obj]) -> None:
        running = [p["metadata"]["name"] for p in by_type(pods, constants.ROLE_WORKER)
                   if pod_phase(p) == "Running"]
        desired = launch.new_config_map(self.job, running, owner_ref=self.owner_ref)
        existing = self.ctx.cached(self.kind.config_maps, kubexec.config_map_name(self.name))
        await self.writer.ensure(CONFIGMAPS, existing, desired, needs_update=_data_changed,
                                 apply_update=_with_data)

    async def ensure_role(self) -> None:
        desired = kubexec.new_launcher_role(self.name, self.ctx.namespace,
                                       launch.worker_replicas(self.job), owner_ref=self.owner_ref)
        existing = self.ctx.cached(self.kind.roles, kubexec.launcher_name(self.name))
        if existing is not None:
            self.report_once(Event(NORMAL, "LauncherRole is exist",
                                   f"LauncherRole: {kubexec.launcher_name(self.name)}"))
        await self.writer.ensure(ROLES, existing, desired, needs_update=_rules_changed,
                                 apply_update=_with_rules)

    async def ensure_role_then_binding(self) -> None:
        """The Role first: the API server refuses a RoleBinding to a Role that does not exist
        yet unless the creator may ``bind`` (it checks that the creator holds the Role's
        rules)."""
        await self.ensure_role()
        await self.ensure_role_binding()

    async def ensure_role_binding(self) -> None:
        existing = self.ctx.cached(self.kind.role_bindings, kubexec.launcher_name(self.name))
        if existing is not None:
            self.report_once(Event(NORMAL, "RoleBinding is exist",
                                   f"RoleBinding: {kubexec.launcher_name(self.name)}"))
        desired = kubexec.new_launcher_role_binding(
            self.name, self.ctx.namespace, owner_ref=self.owner_ref,
            service_account=launch.service_account_name(self.job))
        await self.writer.ensure(ROLE_BINDINGS, existing, desired)

    # -- pods ------------------------------------------------------------------------------

    async def ensure_workers(self, pods: Sequence[Obj]) -> list[Obj]:
        """Scale down, then the missing workers (module doc, step 3); the workers by index."""
        if constants.REPLICA_TYPE_WORKER not in self.specs:
            return []
        replicas = launch.worker_replicas(self.job)
        live = [p for p in by_type(pods, constants.ROLE_WORKER)
                if not p["metadata"].get("deletionTimestamp")]
        if len(live) > replicas:
            doomed = [p["metadata"]["name"] for p in live
                      if (replica_index(p) or 0) >= replicas]
            await self.writer.delete_many(PODS, doomed, concurrency=self.concurrency)
        workers: list[Obj | None] = []
        missing: list[int] = []
        for index in range(replicas):
            pod = self.ctx.cached(self.kind.pods, kubexec.worker_name(self.name, index))
            if pod is None:
                missing.append(index)
            else:
                self.writer.check_controlled(pod, PODS.kind)
            workers.append(pod)
        for index, pod in zip(missing, await self.create_workers(missing), strict=True):
            workers[index] = pod
        return [p for p in workers if p is not None]

    async def create_workers(self, indices: Sequence[int]) -> list[Obj]:
        desired = []
        for index in indices:
            for event in launch.pod_events(self.job, constants.REPLICA_TYPE_WORKER, self.kind.gang):
                self.ctx.emit(event)
            desired.append(launch.new_worker(self.job, index, owner_ref=self.owner_ref,
                                             gang=self.kind.gang))
        results = await self.each(desired, lambda pod: self.writer.create(PODS, pod))
        created: list[Obj] = []
        first: BaseException | None = None
        for pod, result in zip(desired, results, strict=True):
            name = pod["metadata"]["name"]
            if isinstance(result, BaseException):
                first = first or result
                self.ctx.emit(Event(WARNING, "FailedCreatePod", f"Created worker pod: {name}"))
                self.ctx.emit(Event(WARNING, constants.REASON_MPIJOB_FAILED,
                                    f"worker pod created failed: {result}"))
            else:
                created.append(result)
                self.ctx.emit(Event(NORMAL, "SuccessfulCreatePod", f"Created worker pod: {name}"))
        if first is not None:
            raise first
        return created

    async def create_launcher(self) -> Obj:
        for event in launch.pod_events(self.job, constants.REPLICA_TYPE_LAUNCHER, self.kind.gang):
            self.ctx.emit(event)
        desired = launch.new_launcher(self.job, image=self.kind.kubectl_delivery_image,
                                      owner_ref=self.owner_ref, gang=self.kind.gang)
        try:
            launcher = await self.writer.create(PODS, desired)
        except ApiError as err:
            self.ctx.emit(Event(WARNING, constants.REASON_MPIJOB_FAILED,
                                f"launcher pod created failed: {err}"))
            raise
        self.ctx.emit(Event(NORMAL, constants.REASON_MPIJOB_RUNNING,
                            f"launcher pod created success: {launcher['metadata']['name']}"))
        return launcher


FOREIGN_ACCOUNT_RECHECK = timedelta(minutes=5)
"""How long a ServiceAccount found outside the cache is trusted to exist (a create and a GET
each time it is checked)."""


class MPIJobV1Mode(TrainingJobKind):
    """The MPIJob kind's ``v1`` mode (module doc): the engine's training-operator kind on the
    stored MPIJob resource, without Services, with the MPI reconciler's pods."""

    reconcile_type = MPIJobV1Reconcile

    def __init__(self, factory: InformerFactory, *, namespace: str = "",
                 pods: SharedIndexInformer, options: MPIJobOptions) -> None:
        training = TrainingOptions(gang_scheduler_name=options.gang_scheduling,
                                   cluster_domain=options.cluster_domain,
                                   create_concurrency=options.worker_create_concurrency)
        super().__init__(MPIJobV1(), factory, namespace=namespace, pods=pods, options=training,
                         resource=MPIJOBS, services=False)
        ns = namespace or None
        self.config_maps = factory.informer_for(CONFIGMAPS, ns, label_selector="app")
        self.service_accounts = factory.informer_for(SERVICE_ACCOUNTS, ns, label_selector="app")
        self.roles = factory.informer_for(ROLES, ns, label_selector="app")
        self.role_bindings = factory.informer_for(ROLE_BINDINGS, ns, label_selector="app")
        self.kubectl_delivery_image = options.kubectl_delivery_image_v1
        self.foreign_accounts: dict[str, tuple[str, datetime]] = {}
        """Job key -> the ServiceAccount its launcher names, found outside the cache, and when."""
        self.converted = ConvertedJobs(VERSION, self.framework.set_defaults)
        """Each job as ``v1``, defaulted, once per stored version."""

    def forget(self, key: str) -> None:
        self.foreign_accounts.pop(key, None)
        self.converted.forget(key)
        super().forget(key)

    def informers(self) -> KindInformers:
        base = super().informers()
        return KindInformers(jobs=base.jobs, others=base.others, children=[
            *base.children, self.config_maps, self.service_accounts, self.roles,
            self.role_bindings])

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        """The job as written in ``v1``, defaulted: converted once per stored version of the
        job (uid and resourceVersion), a fresh copy for every sync."""
        return self.converted.get(cached)

    def event_component(self, job: Mapping[str, Any]) -> str:
        """``mpijob-controller``: training-operator's Events' source."""
        return launch.CONTROLLER_NAME

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        managed_by = run_policy(job).managed_by
        return managed_by is not None and managed_by != KUBEFLOW_JOBS_CONTROLLER

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        errors = validate(job)
        if not errors:
            return None
        return Event(WARNING, "MPIJobFailedValidation",
                     f"MPIJob failed validation because {errors[0]}")


def _data_changed(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    return bool(as_dict(existing.get("data")) != desired["data"])


def _with_data(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> Obj:
    return {**existing, "data": dict(desired["data"])}


def _normal_rules(rules: object) -> list[Obj]:
    """Rules as the API server returns them (empty lists left out)."""
    return [{k: v for k, v in as_dict(rule).items() if v not in ([], None)}
            for rule in as_list(rules)]


def _rules_changed(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    return _normal_rules(existing.get("rules")) != _normal_rules(desired["rules"])


def _with_rules(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> Obj:
    return {**existing, "rules": desired["rules"]}
