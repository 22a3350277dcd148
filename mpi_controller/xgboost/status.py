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
only for a failure not yet acted on (a Failed pod of the type that is not being deleted). The
Master's rule and the failures' are the engine's (:mod:`mpi_controller.engine.training.status`).
"""

from __future__ import annotations

from datetime import datetime

from mpi_controller.engine.training.api import CONDITION_RUNNING, RESTART_EXIT_CODE
from mpi_controller.engine.training.status import StatusRules
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.xgboost.constants import KIND, REPLICA_TYPE_MASTER
from mpi_controller.xgboost.v1.types import XGBoostJob

__all__ = ["status_order", "update_xgboostjob_status"]



def status_order(job: XGBoostJob) -> list[str]:
    """The replica types in the order the rules visit them: Master, then the rest as written."""
    return sorted(job.replica_specs, key=lambda rtype: rtype != REPLICA_TYPE_MASTER)


def update_xgboostjob_status(job: XGBoostJob, status: Obj, *, pods: list[Obj],
                             now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record. ``pods`` are the
    job's pods as cached when the sync began."""
    rules = StatusRules(KIND, job, status, pods=pods, now=now)
    for rtype in status_order(job):
        spec = job.replica_specs[rtype]
        counts = rules.counts(rtype)
        if rtype == REPLICA_TYPE_MASTER and rules.master_decides(spec, counts,
                                                                running_when_done=True):
            return rules.events
        if counts.failed <= 0:
            continue
        rules.condition(CONDITION_RUNNING, "Running", f"{KIND} {job.name} is running.")
        rules.restart_or_fail(rtype, counts.failed,
                              restart=spec.restart_policy == RESTART_EXIT_CODE)
    return rules.events
