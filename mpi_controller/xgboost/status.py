"""The XGBoostJob status rules (training-operator v1.9 ``XGBoostJobReconciler.UpdateJobStatus``),
run after the replicas were reconciled and counted, on the status dict (changed in place).

For each replica type, with ``expected = replicas - succeeded`` and ``XGBoostJob <name> is
running.`` as the Running message (messages name the job without its namespace):

* the **Master** decides: active pods → ``Running``; none expected → ``Running`` (so a job
  whose master finished before it was seen running still gets one, turned False at once),
  then ``Succeeded`` (``XGBoostJob <name> is successfully completed.``, a Normal
  ``XGBoostJobSucceeded`` event, ``completionTime``), and the rules stop there. Workers never
  make the job Running or Succeeded;
* any type with failed pods: ``Running``, then

  - under restart policy ``ExitCode``: ``Restarting`` (``XGBoostJob <name> is restarting
    because <n> <type> replica(s) failed.``, a Warning ``XGBoostJobRestarting`` event), also
    when the exit code was permanent and the replica step has already failed the job (the
    conditions are then left as they are: ``Failed`` is final, and no ``completionTime`` is
    set, as upstream);
  - under any other policy (``Never``, but also ``OnFailure`` and ``Always``, whose Failed pod
    the replica step deletes to restart it): ``Failed`` (``XGBoostJob <name> is failed because
    <n> <type> replica(s) failed.``, a Normal ``XGBoostJobFailed`` event, ``completionTime``).

Order: upstream walks a Go map (random order); here the Master comes first, then the other
types as written. It only matters when the Master succeeds in the sync that sees a failure of
another type: the job then Succeeds (upstream: Succeeded or Failed, by chance).

Events upstream records on every sync are recorded once: the ``XGBoostJobRestarting`` event
only for a failure not yet acted on (a Failed pod of the type that is not being deleted).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import (
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_RUNNING,
    CONDITION_SUCCEEDED,
    RESTART_EXIT_CODE,
)
from mpi_controller.engine.training.children import by_type
from mpi_controller.engine.training.conditions import reason, set_condition
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import as_dict
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.timefmt import format_time
from mpi_controller.xgboost.constants import KIND, REPLICA_TYPE_MASTER
from mpi_controller.xgboost.v1.types import XGBoostJob

__all__ = ["status_order", "update_xgboostjob_status"]

Obj = dict[str, Any]


def _count(replica: Mapping[str, Any], key: str) -> int:
    value = replica.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _new_failure(pods: list[Obj], rtype: str) -> bool:
    return any(pod_phase(p) == "Failed" and not as_dict(p.get("metadata")).get(
        "deletionTimestamp") for p in by_type(pods, rtype))


def status_order(job: XGBoostJob) -> list[str]:
    """The replica types in the order the rules visit them: Master, then the rest as written."""
    return sorted(job.replica_specs, key=lambda rtype: rtype != REPLICA_TYPE_MASTER)


def update_xgboostjob_status(job: XGBoostJob, status: Obj, *, pods: list[Obj],
                             now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record. ``pods`` are the
    job's pods as cached when the sync began."""
    events: list[Event] = []
    replicas = as_dict(status.get("replicaStatuses"))
    running_message = f"{KIND} {job.name} is running."

    def condition(condition_type: str, what: str, message: str) -> None:
        set_condition(status, condition_type, "True", reason(KIND, what), message, now=now)

    def finish(condition_type: str, what: str, message: str) -> None:
        events.append(Event(NORMAL, reason(KIND, what), message))
        status.setdefault("completionTime", format_time(now))
        condition(condition_type, what, message)

    for rtype in status_order(job):
        spec = job.replica_specs[rtype]
        counts = as_dict(replicas.get(rtype))
        succeeded, running, failed = (_count(counts, k) for k in ("succeeded", "active",
                                                                   "failed"))
        if rtype == REPLICA_TYPE_MASTER:
            if running > 0:
                condition(CONDITION_RUNNING, "Running", running_message)
            if spec.replicas - succeeded == 0:
                condition(CONDITION_RUNNING, "Running", running_message)
                finish(CONDITION_SUCCEEDED, "Succeeded",
                       f"{KIND} {job.name} is successfully completed.")
                return events
        if failed <= 0:
            continue
        condition(CONDITION_RUNNING, "Running", running_message)
        if spec.restart_policy == RESTART_EXIT_CODE:
            message = f"{KIND} {job.name} is restarting because {failed} {rtype} replica(s) failed."
            if _new_failure(pods, rtype):
                events.append(Event(WARNING, reason(KIND, "Restarting"), message))
            condition(CONDITION_RESTARTING, "Restarting", message)
        else:
            finish(CONDITION_FAILED, "Failed", f"{KIND} {job.name} is failed because {failed} "
                                               f"{rtype} replica(s) failed.")
    return events
