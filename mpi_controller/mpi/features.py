"""Opt-ins beyond mpi-operator v0.8.2: what its users keep asking for, off by default.

With every opt-in off the controller behaves exactly as the Go operator. Two kinds of opt-in:

**Feature gates** (``mpi-controller run --feature-gates=Name=true,...``): how the controller
implements the API, for the whole cluster; all default to false (alpha, as new Kubernetes
behaviour starts). A controller flag, because these are fixes of upstream bugs and operator
observability, chosen by whoever runs the controller, not by each job's author.

* ``GangWaitForWorkersReady`` (#608): when the launcher waits for the workers
  (``launcherCreationPolicy: WaitForWorkersReady``, or the SSH readiness annotation below) and
  ``schedulingPolicy.minAvailable`` is unset, the PodGroup's ``minMember`` and
  ``minResources`` count only the workers, the pods that exist before the launcher.
  Upstream asks for workers + 1 and the gang scheduler waits forever for a launcher that is
  only created once the workers run.
* ``LauncherWaitsOnResume`` (#615): with ``WaitForWorkersReady`` the launcher Job of a
  suspended job stays suspended after the job is resumed until every worker is Ready
  (upstream creates a suspended job's launcher at once and unsuspends it together with the
  new workers, so mpirun starts before any worker is up).
* ``CleanUpEvictedJobs`` (#647): a job failed by evicted workers (``MPIJobEvicted``) gets its
  ``completionTime``, so it is finished like any other failure: cleanPodPolicy applies to its
  workers and, for ``Running`` and ``All``, its still running launcher Job is suspended (the
  Job controller deletes the launcher pod); ``ttlSecondsAfterFinished`` then deletes that
  launcher Job (which never finishes on its own), counted from the job's completionTime.
* ``CleanPodPolicyAllLauncher`` (#643): ``cleanPodPolicy: All`` also deletes the pods of the
  finished launcher Job.
* ``FailureDetails`` (#90): the Failed condition and event name what failed: each worker and
  launcher pod with a failed container, its container, exit code and reason (``OOMKilled``,
  ``Error``...), or the evicted workers.
* ``JobMetrics`` (#808): ``mpi_operator_job_info`` series are deleted when their MPIJob goes;
  ``mpi_operator_job_duration_seconds{namespace,result}`` (start to completion, observed once
  when a job finishes) and ``mpi_operator_jobs{namespace,phase}`` (jobs per phase) are added.
* ``ScaleSelector`` (#278, #336): ``status.replicaStatuses.Worker.selector`` is set to the
  workers' label selector, which the CRD's scale subresource (``labelSelectorPath``) gives an
  HPA.

**Annotations on the MPIJob** (``mpi-controller.io/...``): per job, set by its author,
because they depend on the job (the port its sshd listens on; whether its record should
outlive it). Annotations rather than new fields: ``kubeflow.org/v2beta1`` is shared with the Go
operator, whose CRD does not know new fields (``kubectl apply`` rejects a manifest with one
under strict field validation, and a stored object loses it when that CRD is installed
again), while an unknown annotation is kept and ignored there.

* ``mpi-controller.io/worker-ssh-readiness-port: "<port>"`` (#386): a worker container[0]
  without a readiness probe gets a TCP probe on that port, so Ready means "sshd accepts
  connections"; the launcher is created (and resumed) only when every worker is Ready (as
  ``WaitForWorkersReady``), and ``discover_hosts.sh`` lists only Ready workers.
* ``mpi-controller.io/ttl-deletes: MPIJob`` (#644): ``runPolicy.ttlSecondsAfterFinished``
  deletes the MPIJob itself (and with it every child), counted from its ``completionTime``,
  as the training-operator does for its kinds; the launcher Job then gets no TTL of its own.
  ``Launcher`` (or no annotation) keeps upstream's meaning: the TTL of the launcher Job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpi_controller.kube.featuregates import parse_feature_gates
from mpi_controller.kube.fielderrors import FieldError, invalid, not_supported
from mpi_controller.kube.jsonvalue import as_record, as_str_map

__all__ = [
    "GATES",
    "SSH_READINESS_PORT_ANNOTATION",
    "TTL_DELETES_ANNOTATION",
    "TTL_DELETES_LAUNCHER",
    "TTL_DELETES_MPIJOB",
    "Features",
    "ssh_readiness_port",
    "ttl_deletes_mpijob",
    "validate_annotations",
]

SSH_READINESS_PORT_ANNOTATION = "mpi-controller.io/worker-ssh-readiness-port"
TTL_DELETES_ANNOTATION = "mpi-controller.io/ttl-deletes"
TTL_DELETES_LAUNCHER = "Launcher"
TTL_DELETES_MPIJOB = "MPIJob"


GATES: dict[str, str] = {
    "GangWaitForWorkersReady": "gang_wait_for_workers_ready",
    "LauncherWaitsOnResume": "launcher_waits_on_resume",
    "CleanUpEvictedJobs": "clean_up_evicted_jobs",
    "CleanPodPolicyAllLauncher": "clean_pod_policy_all_launcher",
    "FailureDetails": "failure_details",
    "JobMetrics": "job_metrics",
    "ScaleSelector": "scale_selector",
}
"""Gate name (as ``--feature-gates`` spells it) → :class:`Features` field."""


@dataclass(frozen=True)
class Features:
    """Which feature gates are on (see the module doc; :data:`GATES` maps the names)."""

    gang_wait_for_workers_ready: bool = False
    launcher_waits_on_resume: bool = False
    clean_up_evicted_jobs: bool = False
    clean_pod_policy_all_launcher: bool = False
    failure_details: bool = False
    job_metrics: bool = False
    scale_selector: bool = False

    @classmethod
    def parse(cls, text: str) -> Features:
        """From ``--feature-gates`` text; a ValueError names the flag and the problem."""
        gates = parse_feature_gates(text, GATES)
        return cls(**{GATES[name]: on for name, on in gates.items()})

    def enabled(self) -> list[str]:
        """The names of the gates that are on, in :data:`GATES` order."""
        return [name for name, attr in GATES.items() if getattr(self, attr)]


def _annotations(job: Mapping[str, Any]) -> dict[str, str]:
    return as_str_map(as_record(job.get("metadata")).get("annotations"))


def _port(value: str) -> int | None:
    if not value.isdigit() or len(value) > 5:
        return None
    port = int(value)
    return port if 1 <= port <= 65535 else None


def ssh_readiness_port(job: Mapping[str, Any]) -> int | None:
    """The port of ``mpi-controller.io/worker-ssh-readiness-port`` (``None``: not set or not a
    port; validation reports the latter)."""
    raw = _annotations(job).get(SSH_READINESS_PORT_ANNOTATION)
    return None if raw is None else _port(raw.strip())


def ttl_deletes_mpijob(job: Mapping[str, Any]) -> bool:
    """``mpi-controller.io/ttl-deletes: MPIJob``."""
    return _annotations(job).get(TTL_DELETES_ANNOTATION) == TTL_DELETES_MPIJOB


def validate_annotations(job: Mapping[str, Any]) -> list[FieldError]:
    """Errors of the opt-in annotations that are set (none when they are absent)."""
    annotations = _annotations(job)
    errors: list[FieldError] = []
    port = annotations.get(SSH_READINESS_PORT_ANNOTATION)
    if port is not None and _port(port.strip()) is None:
        errors.append(invalid(f"metadata.annotations[{SSH_READINESS_PORT_ANNOTATION}]", port,
                              "must be a port number between 1 and 65535"))
    ttl = annotations.get(TTL_DELETES_ANNOTATION)
    if ttl is not None and ttl not in (TTL_DELETES_LAUNCHER, TTL_DELETES_MPIJOB):
        errors.append(not_supported(f"metadata.annotations[{TTL_DELETES_ANNOTATION}]", ttl,
                                    [TTL_DELETES_LAUNCHER, TTL_DELETES_MPIJOB]))
    return errors
