"""The Go operator's Prometheus metrics, with the same names, types and labels.

| name | type | when |
|---|---|---|
| ``mpi_operator_jobs_created_total`` | counter | the Created condition is first added |
| ``mpi_operator_jobs_successful_total`` | counter | a status computation sees launcher Complete |
| ``mpi_operator_jobs_failed_total`` | counter | a status computation sees the launcher Failed |
| ``mpi_operator_job_info{launcher,namespace}`` | gauge | 1 whenever a launcher Job exists |
| ``mpi_operator_is_leader`` | gauge | 1 while this replica leads |

They live in the project registry (``mpi_controller.runtime.metrics.REGISTRY``) next to the
``workqueue_*`` metrics.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from mpi_controller.runtime.metrics import REGISTRY

__all__ = ["IS_LEADER", "JOBS_CREATED", "JOBS_FAILED", "JOBS_SUCCESSFUL", "JOB_INFO"]

JOBS_CREATED = Counter("mpi_operator_jobs_created", "Counts number of MPI jobs created",
                       registry=REGISTRY)
JOBS_SUCCESSFUL = Counter("mpi_operator_jobs_successful", "Counts number of MPI jobs successful",
                          registry=REGISTRY)
JOBS_FAILED = Counter("mpi_operator_jobs_failed", "Counts number of MPI jobs failed",
                      registry=REGISTRY)
JOB_INFO = Gauge("mpi_operator_job_info", "Information about MPIJob",
                 ["launcher", "namespace"], registry=REGISTRY)
IS_LEADER = Gauge("mpi_operator_is_leader", "Is this client the leader of this mpi-operator "
                  "client set?", registry=REGISTRY)
