"""What a training-operator kind (TFJob, PyTorchJob, ...) gives the common job engine.

The engine's generic part (:mod:`mpi_controller.engine.training.kind`) runs training-operator
v1.9's ``ReconcileJobs`` for any kind; a :class:`TrainingFramework` supplies the few things that
differ between kinds (upstream's ``ControllerInterface`` overrides): names, defaults and
validation, the environment a pod gets (``SetClusterSpec``: TF_CONFIG, MASTER_ADDR, ...), which
pod has the master role, the kind's status rules (``UpdateJobStatus``), and the objects it
keeps beside the pods (:class:`Companion`: PyTorchJob's HorizontalPodAutoscaler).

Every hook is pure: no I/O, plain dicts in and out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from mpi_controller.engine.training.api import ReplicaSpec
from mpi_controller.kube.events import Event
from mpi_controller.kube.fielderrors import FieldError
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.kube.resources import Resource

__all__ = ["Companion", "TrainingFramework", "TrainingOptions"]



@dataclass(frozen=True)
class TrainingOptions:
    """Settings shared by the training-operator kinds (``mpi-controller run`` flags).

    ``gang_scheduler_name``: ``""`` (off), ``volcano`` (any case) or the scheduler-plugins
    scheduler name; ``cluster_domain``: appended to Service host names (``.svc.<domain>``);
    ``create_concurrency``: pods and Services of one job created at once within a sync."""

    gang_scheduler_name: str = ""
    cluster_domain: str = ""
    create_concurrency: int = 16


@dataclass(frozen=True)
class Companion:
    """An object named after the job that the kind keeps in line with the job's spec, reconciled
    first on every sync (upstream reconciles PyTorchJob's HPA before the pods): created when
    missing, updated (its spec replaced) when ``changed(existing, desired)``, deleted while the
    job is suspended or when ``desired`` gives ``None`` (the job asks for none). It is read
    from a cache but not watched: a change made to it by someone else is seen at the job's
    next sync, as upstream does."""

    resource: Resource
    desired: Callable[[Mapping[str, Any], Mapping[str, Any]], Obj | None]
    """``(defaulted job, controller reference)``: the object, or ``None``."""
    changed: Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
    """``(existing, desired)``: whether the existing object must be updated."""


class TrainingFramework(Protocol):
    """A training-operator kind's hooks (see the module doc)."""

    kind: str
    """``TFJob``; also the prefix of condition reasons (``TFJobRunning``)."""
    plural: str
    """``tfjobs`` (resource ``kubeflow.org/v1``)."""
    controller_name: str
    """``tfjob-controller``: the operator-name label, the Events' source component."""
    framework_name: str
    """``tensorflow``: the ``framework`` label of the ``training_operator_jobs_*`` metrics."""
    replica_specs_field: str
    """``tfReplicaSpecs``: where the replica specs are under ``spec``."""
    default_container_name: str
    """``tensorflow``: the container whose ports the Services expose and whose exit code
    decides restarts."""
    delete_job_reasons: tuple[str, str]
    """Event reasons (success, failure) when ``ttlSecondsAfterFinished`` deletes the job."""

    @property
    def companions(self) -> Sequence[Companion]:
        """Objects kept beside the pods (usually none)."""

    def set_defaults(self, job: Mapping[str, Any]) -> Obj:
        """A defaulted deep copy of ``job`` (``SetDefaults_<Kind>``). It changes nothing
        outside ``spec`` and reads nothing of ``status``, ``metadata.resourceVersion`` and
        ``metadata.managedFields`` (the kind keeps its result while only those change)."""

    def validate(self, job: Mapping[str, Any]) -> list[FieldError]:
        """Upstream's validating webhook checks, in its messages (reading nothing of
        ``status``, ``metadata.resourceVersion`` and ``metadata.managedFields``)."""

    def admitted(self, job: Mapping[str, Any]) -> list[FieldError]:
        """The problems of a valid job that upstream admits and runs anyway
        (:mod:`mpi_controller.engine.admitted`), reading nothing of ``status``,
        ``metadata.resourceVersion`` and ``metadata.managedFields``."""

    def forget(self, namespace: str, name: str) -> None:
        """Drop whatever the hooks keep of job ``namespace/name`` (deleted or finished)."""

    def set_cluster_spec(self, job: Mapping[str, Any], template: Obj, rtype: str,
                         index: int) -> None:
        """Add what pod ``<rtype>-<index>`` needs to know of the cluster to ``template`` (a
        private copy of the replica's pod template), in place."""

    def is_master_role(self, specs: Mapping[str, ReplicaSpec], rtype: str, index: int) -> bool:
        """Whether pod ``<rtype>-<index>`` gets ``training.kubeflow.org/job-role: master``."""

    def master_role_decides(self, job: Mapping[str, Any],
                            specs: Mapping[str, ReplicaSpec]) -> bool:
        """Whether the job's ``Running`` and ``Succeeded`` hinge on its master-role pods alone
        (upstream's ``UpdateJobStatus``: a Master or Chief, TFJob's worker 0 under the default
        success policy); the engine then creates those pods before the others."""

    def update_job_status(self, job: Mapping[str, Any], specs: Mapping[str, ReplicaSpec],
                          status: Obj, *, pods: list[Obj], now: datetime) -> list[Event]:
        """The kind's status rules after the replicas were reconciled: change ``status`` (its
        ``replicaStatuses`` are counted) in place and return the Events to record. ``pods``
        are the job's pods as cached when the sync began."""
