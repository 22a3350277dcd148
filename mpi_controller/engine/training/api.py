"""The common ``kubeflow.org/v1`` job API of the training operators (training-operator v1.9
``common_types.go``): names, labels, policies, condition types, and a typed read-only view of
the parts every kind shares (its replica specs and ``runPolicy``).

Jobs stay plain dicts in the Kubernetes JSON shape. :func:`replica_specs` and :func:`run_policy`
(:func:`parse_run_policy`) read them leniently and never raise: a field of the wrong JSON type
reads as unset, a replica spec that is not an object is left out. They read *defaulted* jobs
(each kind's ``set_defaults``), so ``replicas`` and ``restartPolicy`` are normally set; unset
``replicas`` reads as 1 and unset ``cleanPodPolicy`` as ``None``, as the defaulters make them.

:class:`TrainingJob` is what every kind's typed view of a job holds (name, namespace, replica
specs, run policy); a kind's view is a subclass with its own fields, made by :func:`parse_job`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mpi_controller.kube.jsonvalue import as_bool, as_dict, as_int, as_opt_str, as_record, as_str

__all__ = [
    "API_VERSION",
    "CLEAN_POD_POLICY_ALL",
    "CLEAN_POD_POLICY_NONE",
    "CLEAN_POD_POLICY_RUNNING",
    "CONDITION_CREATED",
    "CONDITION_FAILED",
    "CONDITION_RESTARTING",
    "CONDITION_RUNNING",
    "CONDITION_SUCCEEDED",
    "CONDITION_SUSPENDED",
    "GROUP",
    "GROUP_NAME_LABEL",
    "JOB_NAME_LABEL",
    "JOB_NAME_LABEL_DEPRECATED",
    "JOB_ROLE_LABEL",
    "KUBEFLOW_JOBS_CONTROLLER",
    "MULTIKUEUE_CONTROLLER",
    "OPERATOR_NAME_LABEL",
    "REPLICA_INDEX_LABEL",
    "REPLICA_TYPE_LABEL",
    "RESTART_ALWAYS",
    "RESTART_EXIT_CODE",
    "RESTART_NEVER",
    "RESTART_ON_FAILURE",
    "VERSION",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
    "TrainingJob",
    "parse_job",
    "parse_run_policy",
    "replica_specs",
    "run_policy",
]

GROUP = "kubeflow.org"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"

REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
GROUP_NAME_LABEL = "group-name"
"""kubeflow/common v0.4.1's deprecated label (value ``kubeflow.org``), still selected on by the
Kubeflow documents' commands."""
JOB_NAME_LABEL_DEPRECATED = "job-name"
"""kubeflow/common v0.4.1's deprecated label (the job name), as ``kubectl get pods -l
job-name=...`` in the Kubeflow documents selects it."""

KUBEFLOW_JOBS_CONTROLLER = "kubeflow.org/training-operator"
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"

RESTART_ALWAYS = "Always"
RESTART_ON_FAILURE = "OnFailure"
RESTART_NEVER = "Never"
RESTART_EXIT_CODE = "ExitCode"
"""Exit codes 1-127 are permanent failures, 128-255 retryable; the pod gets ``Never``."""

CLEAN_POD_POLICY_ALL = "All"
CLEAN_POD_POLICY_RUNNING = "Running"
CLEAN_POD_POLICY_NONE = "None"

CONDITION_CREATED = "Created"
CONDITION_RUNNING = "Running"
CONDITION_RESTARTING = "Restarting"
CONDITION_SUCCEEDED = "Succeeded"
CONDITION_SUSPENDED = "Suspended"
CONDITION_FAILED = "Failed"


@dataclass(frozen=True)
class ReplicaSpec:
    """One entry of a job's replica specs: ``rtype`` is its key (``Worker``, ``PS``...),
    ``template`` the PodTemplateSpec dict (the job's own; treat it as read-only)."""

    rtype: str
    replicas: int
    restart_policy: str
    template: dict[str, Any] = field(default_factory=dict)

    @property
    def pod_spec(self) -> dict[str, Any]:
        return as_dict(self.template.get("spec"))

    @property
    def containers(self) -> list[dict[str, Any]]:
        """The template's well-formed containers."""
        raw = self.pod_spec.get("containers")
        return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


@dataclass(frozen=True)
class SchedulingPolicy:
    """``runPolicy.schedulingPolicy`` (gang scheduling); ``None`` fields are unset."""

    min_available: int | None = None
    queue: str = ""
    min_resources: Mapping[str, Any] | None = None
    priority_class: str = ""
    schedule_timeout_seconds: int | None = None


@dataclass(frozen=True)
class RunPolicy:
    """``spec.runPolicy``, the one type of the training operators' ``common_types.go`` and of
    mpi-operator v0.8.2's ``pkg/apis/kubeflow/v2beta1/types.go`` (MPIJob ``v1`` and ``v1alpha2``
    read a subset of it). ``None`` fields are unset (nil pointers in Go), so defaulting can be
    observed; :attr:`scheduling` reads an unset ``schedulingPolicy`` as an empty one."""

    clean_pod_policy: str | None = None
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling_policy: SchedulingPolicy | None = None
    suspend: bool | None = None
    managed_by: str | None = None

    @property
    def scheduling(self) -> SchedulingPolicy:
        """``schedulingPolicy``, all fields unset when the job has none."""
        return self.scheduling_policy or SchedulingPolicy()


def replica_specs(job: Mapping[str, Any], specs_field: str) -> dict[str, ReplicaSpec]:
    """The job's replica specs under ``spec.<specs_field>``, in the order written."""
    raw = as_dict(as_record(job.get("spec")).get(specs_field))
    out: dict[str, ReplicaSpec] = {}
    for rtype, spec in raw.items():
        if not isinstance(spec, dict):
            continue
        replicas = as_int(spec.get("replicas"))
        out[rtype] = ReplicaSpec(
            rtype=rtype,
            replicas=1 if replicas is None else replicas,
            restart_policy=as_str(spec.get("restartPolicy")),
            template=as_dict(spec.get("template")),
        )
    return out


def _parse_scheduling_policy(raw: object) -> SchedulingPolicy | None:
    if not isinstance(raw, dict):
        return None
    min_resources = raw.get("minResources")
    return SchedulingPolicy(
        min_available=as_int(raw.get("minAvailable")),
        queue=as_str(raw.get("queue")),
        min_resources=dict(min_resources) if isinstance(min_resources, dict) else None,
        priority_class=as_str(raw.get("priorityClass")),
        schedule_timeout_seconds=as_int(raw.get("scheduleTimeoutSeconds")),
    )


def parse_run_policy(raw: object) -> RunPolicy:
    """A ``runPolicy`` object (any value; malformed parts read as unset). Never raises."""
    d = as_dict(raw)
    return RunPolicy(
        clean_pod_policy=as_opt_str(d.get("cleanPodPolicy")),
        ttl_seconds_after_finished=as_int(d.get("ttlSecondsAfterFinished")),
        active_deadline_seconds=as_int(d.get("activeDeadlineSeconds")),
        backoff_limit=as_int(d.get("backoffLimit")),
        scheduling_policy=_parse_scheduling_policy(d.get("schedulingPolicy")),
        suspend=as_bool(d.get("suspend")),
        managed_by=as_opt_str(d.get("managedBy")),
    )


def run_policy(job: Mapping[str, Any]) -> RunPolicy:
    """The job's ``spec.runPolicy``."""
    return parse_run_policy(as_record(job.get("spec")).get("runPolicy"))


@dataclass(frozen=True)
class TrainingJob:
    """The parts of a ``kubeflow.org/v1`` job every kind reads (a kind's typed view subclasses
    it, adding its own fields)."""

    name: str = ""
    namespace: str = ""
    replica_specs: dict[str, ReplicaSpec] = field(default_factory=dict)
    run_policy: RunPolicy = field(default_factory=RunPolicy)

    @property
    def total_replicas(self) -> int:
        """The replicas of every replica type, summed (upstream's ``getTotalReplicas``)."""
        return sum(spec.replicas for spec in self.replica_specs.values())


View = TypeVar("View", bound=TrainingJob)


def parse_job(view: type[View], job: Mapping[str, Any], specs_field: str,
              **fields: Any) -> View:
    """The typed ``view`` of ``job``: its name, namespace, replica specs (under
    ``spec.<specs_field>``) and run policy read here, the kind's own ``fields`` as given."""
    meta = as_dict(job.get("metadata"))
    return view(name=as_str(meta.get("name")), namespace=as_str(meta.get("namespace")),
                replica_specs=replica_specs(job, specs_field), run_policy=run_policy(job),
                **fields)
