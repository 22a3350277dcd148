"""A typed, read-only view of an MPIJob (``kubeflow.org/v2beta1``), parsed leniently.

Objects stay plain dicts in the Kubernetes JSON shape; this module gives code a typed way to
read one. :func:`parse_mpi_job` never raises: a field of the wrong JSON type reads as unset
(``None`` or ``""``), a non-object pod template reads as ``{}``. Validation
(:mod:`mpi_controller.mpi.v2beta1.validation`) is what reports such problems to users.

Field names follow the JSON names of the upstream Go types (``MPIJobSpec``, ``RunPolicy``,
``SchedulingPolicy``, ``ReplicaSpec``) in snake_case; ``RunPolicy`` and ``SchedulingPolicy`` are
the ones every training kind reads (:mod:`mpi_controller.engine.training.api`). ``None`` means
"not set" (a nil pointer in Go), so defaulting can be observed. Templates are the original dicts
(not copies): treat them as read-only.

:func:`parsed_once` scopes one view to a block (an MPIJob sync): inside it, and in the tasks
it starts, :func:`parse_mpi_job` of that very job object returns the view parsed on entry
instead of parsing again (a sync's helpers parse the job a dozen times). The job's
``metadata`` and ``spec`` must not change inside the block (a sync changes only ``status``);
any other object is parsed as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from mpi_controller.engine.training.api import RunPolicy, SchedulingPolicy, parse_run_policy
from mpi_controller.kube.jsonvalue import as_bool, as_dict, as_int, as_record, as_str, as_str_map
from mpi_controller.mpi import constants

__all__ = [
    "JobMeta",
    "MPIJob",
    "MPIJobSpec",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
    "parse_metadata",
    "parse_mpi_job",
    "parse_replica_specs",
    "parse_run_policy",
    "parsed_once",
]


@dataclass(frozen=True)
class ReplicaSpec:
    """``spec.mpiReplicaSpecs[Launcher|Worker]``; ``template`` is a PodTemplateSpec dict."""

    replicas: int | None = None
    restart_policy: str = ""
    template: dict[str, Any] = field(default_factory=dict)

    @property
    def pod_spec(self) -> dict[str, Any]:
        """The template's ``spec`` (``{}`` when missing or malformed)."""
        return as_dict(self.template.get("spec"))


@dataclass(frozen=True)
class MPIJobSpec:
    """``spec`` of an MPIJob. ``mpi_replica_specs`` is ``None`` when the map itself is absent;
    a key mapped to ``None`` is a present-but-null replica spec (a nil pointer in Go)."""

    slots_per_worker: int | None = None
    run_launcher_as_worker: bool | None = None
    run_policy: RunPolicy = field(default_factory=RunPolicy)
    mpi_replica_specs: dict[str, ReplicaSpec | None] | None = None
    ssh_auth_mount_path: str = ""
    launcher_creation_policy: str = ""
    mpi_implementation: str = ""

    def replica(self, replica_type: str) -> ReplicaSpec | None:
        """The replica spec of ``replica_type`` (``Launcher`` or ``Worker``), or ``None``."""
        if self.mpi_replica_specs is None:
            return None
        return self.mpi_replica_specs.get(replica_type)

    @property
    def launcher(self) -> ReplicaSpec | None:
        return self.replica(constants.REPLICA_TYPE_LAUNCHER)

    @property
    def worker(self) -> ReplicaSpec | None:
        return self.replica(constants.REPLICA_TYPE_WORKER)


@dataclass(frozen=True)
class JobMeta:
    """The metadata an MPIJob view carries (every API version's; see :func:`parse_metadata`)."""

    name: str = ""
    namespace: str = ""
    uid: str = ""
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MPIJob(JobMeta):
    """The parts of an MPIJob that the reconcile logic reads."""

    spec: MPIJobSpec = field(default_factory=MPIJobSpec)

    @property
    def suspended(self) -> bool:
        """``spec.runPolicy.suspend`` (nil means false)."""
        return bool(self.spec.run_policy.suspend)

    @property
    def run_launcher_as_worker(self) -> bool:
        """``spec.runLauncherAsWorker`` (nil means false)."""
        return bool(self.spec.run_launcher_as_worker)

    @property
    def worker_replicas(self) -> int:
        """Worker replicas, 0 without a Worker spec or replicas (upstream ``workerReplicas``)."""
        worker = self.spec.worker
        if worker is None or worker.replicas is None:
            return 0
        return worker.replicas


def _parse_replica_spec(raw: object) -> ReplicaSpec | None:
    if not isinstance(raw, dict):
        return None
    return ReplicaSpec(
        replicas=as_int(raw.get("replicas")),
        restart_policy=as_str(raw.get("restartPolicy")),
        template=as_dict(raw.get("template")),
    )


def parse_replica_specs(raw: object) -> dict[str, ReplicaSpec | None] | None:
    """``spec.mpiReplicaSpecs`` (the same shape in every version)."""
    if not isinstance(raw, dict):
        return None
    return {k: _parse_replica_spec(v) for k, v in raw.items() if isinstance(k, str)}


def _parse_spec(raw: object) -> MPIJobSpec:
    d = as_dict(raw)
    return MPIJobSpec(
        slots_per_worker=as_int(d.get("slotsPerWorker")),
        run_launcher_as_worker=as_bool(d.get("runLauncherAsWorker")),
        run_policy=parse_run_policy(d.get("runPolicy")),
        mpi_replica_specs=parse_replica_specs(d.get("mpiReplicaSpecs")),
        ssh_auth_mount_path=as_str(d.get("sshAuthMountPath")),
        launcher_creation_policy=as_str(d.get("launcherCreationPolicy")),
        mpi_implementation=as_str(d.get("mpiImplementation")),
    )


def parse_metadata(job: object) -> dict[str, Any]:
    """The metadata fields of an MPIJob view (every version's): name, namespace, uid and
    annotations, as keyword arguments."""
    meta = as_dict(as_record(job).get("metadata"))
    return {
        "name": as_str(meta.get("name")),
        "namespace": as_str(meta.get("namespace")),
        "uid": as_str(meta.get("uid")),
        "annotations": as_str_map(meta.get("annotations")),
    }


_SCOPED: ContextVar[tuple[object, MPIJob] | None] = ContextVar("mpijob_view", default=None)


def _parse(job: object) -> MPIJob:
    return MPIJob(**parse_metadata(job), spec=_parse_spec(as_record(job).get("spec")))


def parse_mpi_job(job: object) -> MPIJob:
    """A typed view of ``job`` (any value; malformed parts read as unset). Never raises.
    Inside :func:`parsed_once` of ``job`` itself: the view parsed on entry."""
    scoped = _SCOPED.get()
    if scoped is not None and scoped[0] is job:
        return scoped[1]
    return _parse(job)


@contextmanager
def parsed_once(job: object, view: MPIJob | None = None) -> Iterator[MPIJob]:
    """Parse ``job`` once for the block (see the module doc); yields the view. ``view``: the
    view of ``job`` already parsed (of an object with the same metadata and spec)."""
    view = view if view is not None else _parse(job)
    token = _SCOPED.set((job, view))
    try:
        yield view
    finally:
        _SCOPED.reset(token)
