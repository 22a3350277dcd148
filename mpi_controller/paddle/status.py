"""The PaddleJob status rules (training-operator v1.9 ``PaddleJobReconciler.UpdateJobStatus``),
run after the replicas were reconciled and counted, on the status dict (changed in place).

First every replica type's ``replicaStatuses[<type>].selector`` is set: the job's labels and
the replica type as a label selector string (``metav1.FormatLabelSelector``), which the scale
subresource publishes. Then Master, then Worker (then any other type), each with ``expected =
replicas - succeeded``:

* **parameter-server mode** (a Master): the Master decides. Active → ``Running``
  (``PaddleJob <name> is running.``); none expected → ``Succeeded`` (``PaddleJob <name> is
  successfully completed.``, a Normal ``PaddleJobSucceeded`` event, ``completionTime``), and
  the rules stop there. Workers finishing never complete the job;
* **collective mode** (no Master): the Worker decides. None expected → ``Succeeded``
  (``PaddleJob <ns>/<name> successfully completed.``, the same event and ``completionTime``);
  else active → ``Running`` (``PaddleJob <ns>/<name> is running.``). There is no elastic rule:
  every worker must succeed, ``elasticPolicy`` or not;
* a type with failed pods and fewer succeeded and active ones than replicas: ``Restarting``
  unless its restart policy is ``Never`` (``PaddleJob <name> is restarting because <n> <type>
  replica(s) failed.``, a Warning ``PaddleJobRestarting`` event), else ``Failed`` (``PaddleJob
  <name> is failed because <n> <type> replica(s) failed.``, a Normal ``PaddleJobFailed``
  event, ``completionTime``).

Note the two message formats (with and without the namespace), as upstream writes them.
Upstream visits the types in Go's random map order; the fixed order here means a Master that
has succeeded always ends the job before a Worker's failure is looked at. The Restarting event
is recorded for a failure not yet acted on (a Failed pod not being deleted), once per failure
instead of on every sync until the pod is gone. The rules are the engine's
(:mod:`mpi_controller.engine.training.status`), in PaddleJob's order.
"""

from __future__ import annotations

from datetime import datetime

from mpi_controller.engine.training.status import StatusRules, master_or_workers
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.paddle.constants import (
    CONTROLLER_NAME,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.paddle.v1.types import PaddleJob

__all__ = ["update_paddlejob_status"]



def _ordered(job: PaddleJob) -> list[str]:
    first = [t for t in (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER) if t in job.replica_specs]
    return first + [t for t in job.replica_specs if t not in first]


def update_paddlejob_status(job: PaddleJob, status: Obj, *, pods: list[Obj],
                            now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record."""
    rules = StatusRules(KIND, job, status, pods=pods, now=now)
    rules.set_selectors(CONTROLLER_NAME)
    return master_or_workers(rules, _ordered(job), master_type=REPLICA_TYPE_MASTER,
                             worker_type=REPLICA_TYPE_WORKER)
