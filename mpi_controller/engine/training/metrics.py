"""training-operator's job metrics, with its names, help texts and labels
(``pkg/common/metrics.go``), each counted once per job transition:

| name | when |
|---|---|
| ``training_operator_jobs_created_total`` | the ``Created`` condition is added |
| ``training_operator_jobs_successful_total`` | ``Succeeded`` becomes True |
| ``training_operator_jobs_failed_total`` | ``Failed`` becomes True |
| ``training_operator_jobs_restarted_total`` | ``Restarting`` becomes True |
| ``training_operator_jobs_deleted_total`` | ``ttlSecondsAfterFinished`` deletes the job |

Labels: ``job_namespace`` and ``framework`` (``tensorflow``, ``pytorch``, ...). Upstream counts
on every reconcile that recomputes a condition (and ``created`` on every start of the operator
for every job); :func:`transitions` is what makes them count once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter

from mpi_controller.engine.training.api import (
    CONDITION_CREATED,
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_SUCCEEDED,
)
from mpi_controller.kube.conditions import get_condition, has_condition
from mpi_controller.runtime.metrics import REGISTRY

__all__ = ["JOBS_CREATED", "JOBS_DELETED", "JOBS_FAILED", "JOBS_RESTARTED", "JOBS_SUCCESSFUL",
           "count_transitions", "transitions"]

_LABELS = ["job_namespace", "framework"]
JOBS_CREATED = Counter("training_operator_jobs_created", "Counts number of jobs created",
                       _LABELS, registry=REGISTRY)
JOBS_DELETED = Counter("training_operator_jobs_deleted", "Counts number of jobs deleted",
                       _LABELS, registry=REGISTRY)
JOBS_SUCCESSFUL = Counter("training_operator_jobs_successful", "Counts number of jobs successful",
                          _LABELS, registry=REGISTRY)
JOBS_FAILED = Counter("training_operator_jobs_failed", "Counts number of jobs failed",
                      _LABELS, registry=REGISTRY)
JOBS_RESTARTED = Counter("training_operator_jobs_restarted", "Counts number of jobs restarted",
                         _LABELS, registry=REGISTRY)

_COUNTERS = {CONDITION_SUCCEEDED: JOBS_SUCCESSFUL, CONDITION_FAILED: JOBS_FAILED,
             CONDITION_RESTARTING: JOBS_RESTARTED}


def transitions(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The condition types a status change entered: ``Created`` when added, ``Succeeded``,
    ``Failed`` and ``Restarting`` when they became True (a Restarting condition that was set
    again after a Running one counts anew: its ``lastTransitionTime`` changed)."""
    out = []
    if get_condition(before, CONDITION_CREATED) is None \
            and get_condition(after, CONDITION_CREATED) is not None:
        out.append(CONDITION_CREATED)
    for condition_type in _COUNTERS:
        if not has_condition(after, condition_type):
            continue
        old = get_condition(before, condition_type)
        new = get_condition(after, condition_type)
        if old is None or old.get("status") != "True" \
                or (new or {}).get("lastTransitionTime") != old.get("lastTransitionTime"):
            out.append(condition_type)
    return out


def count_transitions(before: Mapping[str, Any], after: Mapping[str, Any], *, namespace: str,
                      framework: str) -> None:
    """Increment the counters of :func:`transitions`."""
    for condition_type in transitions(before, after):
        counter = JOBS_CREATED if condition_type == CONDITION_CREATED else _COUNTERS[condition_type]
        counter.labels(job_namespace=namespace, framework=framework).inc()
