"""The TFJob status rules (training-operator v1.9 ``TFJobReconciler.UpdateJobStatus``), run
after the replicas were reconciled and counted, on the status dict (changed in place).

Replica types are visited in the order Chief, Evaluator, Master, PS, Worker; for each,
``expected = replicas - succeeded``:

* with a Chief or Master spec, only it decides: active pods → ``Running`` (``TFJob <ns>/<name>
  is running.``), none expected → ``Succeeded`` (``TFJob <ns>/<name> successfully
  completed.``, a ``TFJobSucceeded`` event, ``completionTime``);
* otherwise the Worker decides: ``Succeeded`` when none is expected, or when worker 0 has
  completed (its pod Succeeded with exit code 0) and ``successPolicy`` is not ``AllWorkers``;
  else ``Running`` while any is active;
* any type with failed pods: a ``Restarting`` condition there already is set again; else, with
  ``enableDynamicWorker``, a Worker failure is tolerated; else ``Failed`` (``TFJob <ns>/<name>
  has failed because <n> <type> replica(s) failed.``, a Normal ``TFJobFailed`` event,
  ``completionTime``) - also when a chief exists.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import (
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_RUNNING,
    CONDITION_SUCCEEDED,
)
from mpi_controller.engine.training.conditions import set_condition
from mpi_controller.engine.training.decisions import MISSING_EXIT_CODE, exit_code
from mpi_controller.engine.training.replicas import indexed_by_type, indexed_slices
from mpi_controller.engine.training.status import StatusRules
from mpi_controller.kube.conditions import get_condition
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import as_str
from mpi_controller.kube.pods import pod_phase
from mpi_controller.tensorflow.constants import (
    DEFAULT_CONTAINER_NAME,
    KIND,
    REPLICA_TYPE_CHIEF,
    REPLICA_TYPE_EVALUATOR,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_PS,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.tensorflow.v1.types import TFJob, is_chief_or_master

__all__ = ["update_tfjob_status", "worker0_completed"]

STATUS_ORDER = (REPLICA_TYPE_CHIEF, REPLICA_TYPE_EVALUATOR, REPLICA_TYPE_MASTER, REPLICA_TYPE_PS,
                REPLICA_TYPE_WORKER)


def worker0_completed(job: TFJob, pods: list[dict[str, Any]]) -> bool:
    """Worker 0's only pod Succeeded with exit code 0 (True without a Worker spec)."""
    worker = job.replica_specs.get(REPLICA_TYPE_WORKER)
    if worker is None:
        return True
    buckets = indexed_slices(indexed_by_type(pods).get(REPLICA_TYPE_WORKER.lower(), ()),
                             worker.replicas)
    if not buckets or len(buckets[0]) != 1:
        return False
    pod = buckets[0][0]
    code = exit_code(pod, DEFAULT_CONTAINER_NAME)
    return (MISSING_EXIT_CODE if code is None else code) == 0 and pod_phase(pod) == "Succeeded"


def update_tfjob_status(job: TFJob, status: dict[str, Any], *, pods: list[dict[str, Any]],
                        now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record."""
    rules = StatusRules(KIND, job, status, pods=pods, now=now)
    job_ref = f"{job.namespace}/{job.name}"
    worker0 = worker0_completed(job, pods)
    restarting = get_condition(status, CONDITION_RESTARTING)
    restarting = dict(restarting) if restarting is not None else None
    has_chief_or_master = job.has_chief_or_master
    for rtype in STATUS_ORDER:
        spec = job.replica_specs.get(rtype)
        if spec is None:
            continue
        counts = rules.counts(rtype)
        expected = spec.replicas - counts.succeeded
        decides = is_chief_or_master(rtype) if has_chief_or_master \
            else rtype == REPLICA_TYPE_WORKER
        worker_done = not has_chief_or_master and worker0 and not job.all_workers_must_succeed
        if decides and is_chief_or_master(rtype) and counts.active > 0:
            rules.condition(CONDITION_RUNNING, "Running", f"TFJob {job_ref} is running.")
        if decides and (expected == 0 or worker_done):
            rules.finish(CONDITION_SUCCEEDED, "Succeeded",
                         f"TFJob {job_ref} successfully completed.")
        elif decides and not is_chief_or_master(rtype) and counts.active > 0:
            rules.condition(CONDITION_RUNNING, "Running", f"TFJob {job_ref} is running.")
        if counts.failed <= 0:
            continue
        if restarting is not None:
            set_condition(status, CONDITION_RESTARTING, "True", as_str(restarting.get("reason")),
                          as_str(restarting.get("message")), now=now)
        elif job.enable_dynamic_worker and rtype == REPLICA_TYPE_WORKER:
            continue
        else:
            rules.finish(CONDITION_FAILED, "Failed", f"TFJob {job_ref} has failed because "
                                                     f"{counts.failed} {rtype} replica(s) failed.")
    return rules.events
