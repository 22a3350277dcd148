"""A typed, read-only view of an mpi-operator v0.2.3 ``kubeflow.org/v1alpha2`` MPIJob, parsed
leniently (as :mod:`mpi_controller.mpi.v1.types`, whose fields it has, plus the top-level
``backoffLimit`` and ``activeDeadlineSeconds``).

Upstream's effective values, which the ``effective_*`` properties give: ``runPolicy``'s
``backoffLimit`` and ``activeDeadlineSeconds`` override the top-level ones when set; the
clean-pod policy is the top-level one only (``runPolicy.cleanPodPolicy``, TTL and the
scheduling policy are ignored); slots per worker default to 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mpi_controller.kube.jsonvalue import as_dict, as_int, as_record
from mpi_controller.mpi.v1.types import MPIJob as V1Job
from mpi_controller.mpi.v1.types import MPIJobSpec as V1Spec
from mpi_controller.mpi.v1.types import parse_spec_fields
from mpi_controller.mpi.v2beta1.types import parse_metadata

__all__ = ["MPIJob", "MPIJobSpec", "parse_mpi_job"]


@dataclass(frozen=True)
class MPIJobSpec(V1Spec):
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None

    @property
    def effective_backoff_limit(self) -> int | None:
        limit = self.run_policy.backoff_limit
        return self.backoff_limit if limit is None else limit

    @property
    def effective_active_deadline_seconds(self) -> int | None:
        deadline = self.run_policy.active_deadline_seconds
        return self.active_deadline_seconds if deadline is None else deadline


@dataclass(frozen=True)
class MPIJob(V1Job):
    spec: MPIJobSpec = field(default_factory=MPIJobSpec)


def parse_mpi_job(job: object) -> MPIJob:
    """A typed view of ``job`` (any value; malformed parts read as unset). Never raises."""
    spec = as_dict(as_record(job).get("spec"))
    return MPIJob(
        **parse_metadata(job),
        spec=MPIJobSpec(**parse_spec_fields(spec),
                        backoff_limit=as_int(spec.get("backoffLimit")),
                        active_deadline_seconds=as_int(spec.get("activeDeadlineSeconds"))),
    )
