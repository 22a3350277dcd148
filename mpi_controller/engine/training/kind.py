"""A training-operator kind on the job engine: what training-operator v1.9 watches and checks for
any :class:`~mpi_controller.engine.training.framework.TrainingFramework`.

:class:`TrainingJobKind` tells the engine what to watch (the kind's jobs; its pods through the
shared pod informer; Services labelled with its operator name; with gang scheduling PodGroups
and PriorityClasses), defaults and validates jobs with the framework's hooks, and leaves jobs
of ``runPolicy.managedBy: kueue.x-k8s.io/multikueue`` alone (any other value but
``kubeflow.org/training-operator`` fails validation, as upstream's webhook rejects it). Each
sync is a :class:`~mpi_controller.engine.training.reconcile.TrainingReconcile` (upstream's
``ReconcileJobs``). The kind remembers, per job, the events it records once (see
:meth:`TrainingJobKind.first_report`).

**What a sync reads of the job is kept between syncs**
(:class:`~mpi_controller.kube.changes.KeptJobs`): the defaulted copy
of the cached job, whether it is managed elsewhere, its validation Event, its admitted problems,
its replica specs and run policy. A sync of the same cached object (a pod changed, the job did
not) reuses them all; a sync of a newer object that differs from the last one only in what a
status write changes (:func:`~mpi_controller.kube.changes.same_but_status`: ``status``,
``metadata.resourceVersion``, ``metadata.managedFields``) reuses the defaulted ``spec`` and
everything read from it, with the new status and metadata copied. Both rest on the
framework's contract: ``set_defaults``, ``validate`` and ``admitted`` read nothing of those
three, and ``set_defaults`` changes nothing outside ``spec``; and on the sync's: it never
changes the job it is given. A kind that prepares its jobs otherwise (MPIJob ``v1``, by
conversion) gets none of this but the same results. The entry of a job is dropped when the
job is deleted or finished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpi_controller.engine.admitted import admitted_events
from mpi_controller.engine.context import SyncContext
from mpi_controller.engine.kind import KindInformers
from mpi_controller.engine.training import gang
from mpi_controller.engine.training.api import (
    GROUP,
    MULTIKUEUE_CONTROLLER,
    OPERATOR_NAME_LABEL,
    VERSION,
    ReplicaSpec,
    RunPolicy,
    replica_specs,
    run_policy,
)
from mpi_controller.engine.training.conditions import is_finished, reason
from mpi_controller.engine.training.framework import TrainingFramework, TrainingOptions
from mpi_controller.engine.training.reconcile import TrainingReconcile
from mpi_controller.kube.changes import KeptJobs
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.fielderrors import aggregate_message
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import PRIORITY_CLASSES, SERVICES, Resource
from mpi_controller.runtime.cache import CONTROLLER_UID_INDEX, controller_uid_index
from mpi_controller.runtime.informer import InformerFactory, SharedIndexInformer

__all__ = ["TrainingJobKind"]


class TrainingJobKind:
    """A training-operator kind (see the module doc); ``framework`` supplies its hooks."""

    reconcile_type: type[TrainingReconcile] = TrainingReconcile
    """The reconcile a job gets: :class:`~.reconcile.TrainingReconcile`, or a kind's subclass
    of it (MPIJob ``v1``)."""

    def __init__(self, framework: TrainingFramework, factory: InformerFactory, *,
                 namespace: str = "", pods: SharedIndexInformer,
                 options: TrainingOptions, resource: Resource | None = None,
                 services: bool = True) -> None:
        """``resource``: the job resource read and written (default ``kubeflow.org/v1``
        ``<plural>``; the children's controller references name its version);
        ``services=False``: the kind has no per-replica Services (nothing watched for them)."""
        self.framework = framework
        self.options = options
        self.resource = resource or Resource(GROUP, VERSION, framework.plural, True,
                                             framework.kind)
        self.operator_name = framework.controller_name
        self.component = framework.controller_name
        ns = namespace or None
        self.pods = pods
        self.jobs = factory.informer_for(self.resource, ns)
        self.services: SharedIndexInformer | None = None
        if services:
            self.services = factory.informer_for(
                SERVICES, ns,
                label_selector=f"{OPERATOR_NAME_LABEL}={framework.controller_name}",
                indexers={CONTROLLER_UID_INDEX: controller_uid_index})
        self.gang = gang.gang_scheduler(options.gang_scheduler_name)
        self.pod_groups: SharedIndexInformer | None = None
        self.priority_classes: SharedIndexInformer | None = None
        if self.gang is not None:
            self.pod_groups = factory.informer_for(self.gang.resource, ns)
            self.priority_classes = factory.informer_for(PRIORITY_CLASSES)
        self.companions = [(c, factory.informer_for(c.resource, ns))
                           for c in framework.companions]
        self._reported: dict[str, set[tuple[str, str, str]]] = {}
        self.kept = KeptJobs(lambda cached: self.framework.set_defaults(cached))
        """Each job's defaulted copy and what is read of it, between syncs (module doc)."""

    # -- JobKind ---------------------------------------------------------------------------

    def informers(self) -> KindInformers:
        children = [self.pods] + ([self.services] if self.services is not None else [])
        if self.pod_groups is not None:
            children.append(self.pod_groups)
        others = [self.priority_classes] if self.priority_classes is not None else []
        others += [informer for _, informer in self.companions]
        return KindInformers(jobs=self.jobs, children=children, others=others)

    def prepare(self, cached: Mapping[str, Any]) -> Obj:
        """The framework's defaulted copy of ``cached``, kept between syncs (module doc)."""
        return self.kept.prepare(cached)

    def specs_and_policy(self, job: Mapping[str, Any]) -> tuple[dict[str, ReplicaSpec],
                                                                  RunPolicy]:
        """``job``'s replica specs and run policy (read once per prepared job)."""
        return self.kept.read(job, "specs", lambda: (
            replica_specs(job, self.framework.replica_specs_field), run_policy(job)))

    def event_component(self, job: Mapping[str, Any]) -> str:
        return ""

    def managed_elsewhere(self, job: Mapping[str, Any]) -> bool:
        return self.specs_and_policy(job)[1].managed_by == MULTIKUEUE_CONTROLLER

    def validate(self, job: Mapping[str, Any]) -> Event | None:
        return self.kept.read(job, "invalid", lambda: self._validate(job))

    def _validate(self, job: Mapping[str, Any]) -> Event | None:
        errors = self.framework.validate(job)
        if not errors:
            return None
        kind = self.framework.kind
        return Event(WARNING, reason(kind, "FailedValidation"),
                     f"{kind} failed validation because {aggregate_message(errors)}")

    def admitted_problems(self, job: Mapping[str, Any]) -> Sequence[Event]:
        return self.kept.read(job, "admitted", lambda: admitted_events(
            self.framework.admitted(job), runs_as="training-operator"))

    def child_update_matters(self, job: Mapping[str, Any], child_kind: str,
                             old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return True

    async def sync(self, ctx: SyncContext) -> None:
        reconcile = self.reconcile_type(self, ctx)
        await reconcile.run()
        if is_finished(reconcile.status):
            self._drop(ctx.namespace, ctx.name)

    def _drop(self, namespace: str, name: str) -> None:
        """Forget what is kept of job ``namespace/name`` between syncs."""
        self.kept.drop(namespace, name)
        self.framework.forget(namespace, name)

    def forget(self, key: str) -> None:
        self._reported.pop(key, None)
        namespace, _, name = key.rpartition("/")
        self._drop(namespace, name)

    def first_report(self, key: str, uid: str, event: Event) -> bool:
        """True the first time ``event`` is reported for pod ``uid`` of job ``key``."""
        seen = self._reported.setdefault(key, set())
        entry = (uid, event.reason, event.message)
        if entry in seen:
            return False
        seen.add(entry)
        return True
