"""The Go operator's Prometheus metrics, with the same names, types and labels.

| name | type | when |
|---|---|---|
| ``mpi_operator_jobs_created_total`` | counter | the Created condition is first added |
| ``mpi_operator_jobs_successful_total`` | counter | a status computation sees launcher Complete |
| ``mpi_operator_jobs_failed_total`` | counter | a status computation sees the launcher Failed |
| ``mpi_operator_jobs_restarted_total`` | counter | a ``v1alpha2`` job becomes Restarting |
| ``mpi_operator_job_info{launcher,namespace}`` | gauge | 1 whenever a launcher Job exists |
| ``mpi_operator_is_leader`` | gauge | 1 while this replica leads |

They live in the project registry (``mpi_controller.runtime.metrics.REGISTRY``) next to the
``workqueue_*`` metrics.

With the ``JobMetrics`` gate (:mod:`~mpi_controller.mpi.features`; kubeflow/mpi-operator#808)
a job's ``mpi_operator_job_info`` series is deleted when the job goes, and two families are
exported beside them (no per-job labels):

* ``mpi_operator_job_duration_seconds{namespace,result}`` (histogram; result Succeeded or
  Failed): completionTime - startTime, observed once per job, when its finished status is
  written;
* ``mpi_operator_jobs{namespace,phase}`` (gauge; phase Created, Running, Suspended,
  Restarting, Succeeded or Failed): the jobs this replica reconciles, by phase
  (:class:`PhaseTracker`).
"""

from __future__ import annotations

import contextlib

from prometheus_client import Counter, Gauge, Histogram

from mpi_controller.runtime.metrics import REGISTRY

__all__ = ["IS_LEADER", "JOBS", "JOBS_CREATED", "JOBS_FAILED", "JOBS_RESTARTED", "JOBS_SUCCESSFUL",
           "JOB_DURATION", "JOB_INFO", "PhaseTracker", "forget_job_info"]

JOBS_CREATED = Counter("mpi_operator_jobs_created", "Counts number of MPI jobs created",
                       registry=REGISTRY)
JOBS_SUCCESSFUL = Counter("mpi_operator_jobs_successful", "Counts number of MPI jobs successful",
                          registry=REGISTRY)
JOBS_FAILED = Counter("mpi_operator_jobs_failed", "Counts number of MPI jobs failed",
                      registry=REGISTRY)
JOBS_RESTARTED = Counter("mpi_operator_jobs_restarted", "Counts number of MPI jobs restarted",
                         registry=REGISTRY)
JOB_INFO = Gauge("mpi_operator_job_info", "Information about MPIJob",
                 ["launcher", "namespace"], registry=REGISTRY)
IS_LEADER = Gauge("mpi_operator_is_leader", "Is this client the leader of this mpi-operator "
                  "client set?", registry=REGISTRY)

JOB_DURATION = Histogram(
    "mpi_operator_job_duration_seconds",
    "Time from an MPIJob's start to its completion, by result (Succeeded, Failed)",
    ["namespace", "result"], registry=REGISTRY,
    buckets=(10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400, 172800, 604800))
JOBS = Gauge("mpi_operator_jobs", "MPIJobs reconciled by this controller, by phase",
             ["namespace", "phase"], registry=REGISTRY)


def forget_job_info(launcher: str, namespace: str) -> None:
    """Delete the ``mpi_operator_job_info`` series of a launcher (absent: nothing to do)."""
    with contextlib.suppress(KeyError):
        JOB_INFO.remove(launcher, namespace)


class PhaseTracker:
    """Keeps ``mpi_operator_jobs{namespace,phase}`` equal to the number of jobs this tracker
    last saw in each phase (one tracker per controller; jobs are keyed ``ns/name``)."""

    def __init__(self) -> None:
        self._phases: dict[str, tuple[str, str]] = {}

    def observe(self, key: str, namespace: str, phase: str) -> None:
        previous = self._phases.get(key)
        if previous == (namespace, phase):
            return
        if previous is not None:
            JOBS.labels(*previous).dec()
        self._phases[key] = (namespace, phase)
        JOBS.labels(namespace, phase).inc()

    def forget(self, key: str) -> None:
        previous = self._phases.pop(key, None)
        if previous is not None:
            JOBS.labels(*previous).dec()
