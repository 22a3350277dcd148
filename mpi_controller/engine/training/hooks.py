"""A kind's :class:`~mpi_controller.engine.training.framework.TrainingFramework` made of its pure
functions and names: :class:`TrainingHooks`.

A kind gives its ``constants`` module (the names of
:class:`~mpi_controller.engine.training.names.KindNames`: kind, plural, controller, framework,
replica specs field, default container, the reasons of a TTL deletion), ``parse`` (its typed
view of a job), ``set_defaults``, ``validate``, ``admitted`` (the problems upstream admits;
default: negative ``replicas``; every kind's are followed by ``spec.runPolicy``'s), ``pod_env``
(the variables of pod ``<rtype>-<index>``, appended to every container; ``None``: none),
``is_master_role`` and ``update_status`` (its status rules over the typed view), its
companions, and ``master_decides`` (whether those rules hinge on the master role alone;
default: never). A kind whose
cluster spec is more than environment variables (TFJob's ``TF_CONFIG``, PyTorchJob's init
container) subclasses it and extends :meth:`TrainingHooks.set_cluster_spec`.

A sync builds all of a job's pods from one job object, and the kind hands the same defaulted
object to the syncs that follow while the job is unchanged
(:class:`~mpi_controller.engine.training.kind.TrainingJobKind`): :class:`PerJob` keeps, per
job, what is computed from it (the typed view, TFJob's cluster spec) for the next call with
the same object; :meth:`TrainingHooks.forget` drops a job's. What it computes reads nothing
of the job's ``status``, ``metadata.resourceVersion`` and ``metadata.managedFields``: the kind
renews its copy in place when only those change. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from mpi_controller.engine.training.api import ReplicaSpec, TrainingJob
from mpi_controller.engine.training.env import add_pod_env
from mpi_controller.engine.training.framework import Companion
from mpi_controller.engine.training.names import KindNames
from mpi_controller.engine.training.validation import negative_replicas, run_policy_problems
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import Obj

__all__ = ["MasterDecides", "MasterRole", "PerJob", "StatusUpdate", "TrainingHooks",
           "a_master_decides"]

Job = Mapping[str, Any]
T = TypeVar("T")
View = TypeVar("View", bound=TrainingJob)
ViewIn = TypeVar("ViewIn", bound=TrainingJob, contravariant=True)
MasterRole = Callable[[Mapping[str, ReplicaSpec], str, int], bool]
"""``(replica specs, rtype, index)``: whether pod ``<rtype>-<index>`` has the master role."""
MasterDecides = Callable[[Mapping[str, Any], Mapping[str, ReplicaSpec]], bool]
"""``(job, replica specs)``: whether the job's state hinges on its master-role pods alone."""


def a_master_decides(job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec]) -> bool:
    """PyTorchJob's, PaddleJob's and XGBoostJob's rule: with a ``Master`` replica type,
    upstream's status rules read the Master alone (without one, every worker)."""
    return "Master" in specs


class StatusUpdate(Protocol[ViewIn]):
    """A kind's status rules: ``(typed view, status, pods=, now=)``, the Events to record."""

    def __call__(self, job: ViewIn, status: Obj, *, pods: list[Obj],
                 now: datetime) -> list[Event]: ...


def _job_key(job: Job) -> str:
    meta = job.get("metadata")
    if not isinstance(meta, dict):
        return ""
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


class PerJob(Generic[T]):
    """``compute(job)``, kept per job (its namespace and name) for the next call with the same
    job object, until :meth:`forget`."""

    def __init__(self, compute: Callable[[Job], T]) -> None:
        self._compute = compute
        self._kept: dict[str, tuple[Job, T]] = {}

    def __call__(self, job: Job) -> T:
        key = _job_key(job)
        kept = self._kept.get(key)
        if kept is None or kept[0] is not job:
            kept = self._kept[key] = (job, self._compute(job))
        return kept[1]

    def forget(self, namespace: str, name: str) -> None:
        """Drop what is kept for job ``namespace/name``."""
        self._kept.pop(f"{namespace}/{name}", None)


class TrainingHooks(Generic[View]):
    """A kind's hooks (module doc)."""

    def __init__(self, names: KindNames, *, parse: Callable[[Job], View],
                 set_defaults: Callable[[Job], Obj],
                 validate: Callable[[Job], list[FieldError]],
                 pod_env: Callable[[View, str, int], Sequence[Mapping[str, Any]]] | None,
                 is_master_role: MasterRole, update_status: StatusUpdate[View],
                 companions: Sequence[Companion] = (),
                 admitted: Callable[[Job], list[FieldError]] | None = None,
                 master_decides: MasterDecides | None = None) -> None:
        self.kind = names.KIND
        self.plural = names.PLURAL
        self.controller_name = names.CONTROLLER_NAME
        self.framework_name = names.FRAMEWORK_NAME
        self.replica_specs_field = names.SPECS_FIELD
        self.default_container_name = names.DEFAULT_CONTAINER_NAME
        self.delete_job_reasons = names.DELETE_JOB_REASONS
        self.companions = tuple(companions)
        self._per_job: list[PerJob[Any]] = []
        self.view = self.per_job(parse)
        """The typed view of a job (kept for the next call with the same job object)."""
        self._set_defaults = set_defaults
        self._validate = validate
        specs_field = names.SPECS_FIELD
        self._admitted = admitted or (lambda job: negative_replicas(job, specs_field))
        self._pod_env = pod_env
        self._is_master_role = is_master_role
        self._master_decides = master_decides
        self._update_status = update_status

    def per_job(self, compute: Callable[[Job], T]) -> PerJob[T]:
        """A :class:`PerJob` of ``compute`` that :meth:`forget` clears."""
        kept = PerJob(compute)
        self._per_job.append(kept)
        return kept

    def forget(self, namespace: str, name: str) -> None:
        """Drop what is kept for job ``namespace/name`` (it was deleted or finished)."""
        for kept in self._per_job:
            kept.forget(namespace, name)

    def set_defaults(self, job: Job) -> Obj:
        return self._set_defaults(job)

    def validate(self, job: Job) -> list[FieldError]:
        return self._validate(job)

    def admitted(self, job: Job) -> list[FieldError]:
        """The kind's own admitted problems, then those of ``spec.runPolicy`` (every kind)."""
        return [*self._admitted(job), *run_policy_problems(job)]

    def set_cluster_spec(self, job: Job, template: Obj, rtype: str, index: int) -> None:
        """``pod_env``'s variables appended to every container of ``template``."""
        if self._pod_env is not None:
            add_pod_env(template, self._pod_env(self.view(job), rtype, index))

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        return self._is_master_role(specs, rtype, index)

    def master_role_decides(self, job: Job, specs: Mapping[str, ReplicaSpec]) -> bool:
        return self._master_decides is not None and self._master_decides(job, specs)

    def update_job_status(self, job: Job, specs: Mapping[str, ReplicaSpec], status: Obj, *,
                          pods: list[Obj], now: datetime) -> list[Event]:
        return self._update_status(self.view(job), status, pods=pods, now=now)
