"""The PyTorchJob status rules (training-operator v1.9 ``PyTorchJobReconciler.UpdateJobStatus``),
run after the replicas were reconciled and counted, on the status dict (changed in place).

First every replica type's ``replicaStatuses[<type>].selector`` is set: the job's labels and
the replica type as a label selector string (``metav1.FormatLabelSelector``), which the scale
subresource publishes for an HPA. Then Master, then Worker, each with ``expected = replicas -
succeeded``:

* with a Master, it decides: active → ``Running`` (``PyTorchJob <name> is running.``), none
  expected → ``Succeeded`` (``PyTorchJob <name> is successfully completed.``, a
  ``PyTorchJobSucceeded`` event, ``completionTime``), and the rules stop there;
* without one, the Worker decides: ``Succeeded`` when none is expected, or, for an elastic job,
  as soon as one worker has succeeded (``PyTorchJob <ns>/<name> successfully completed.``);
  else ``Running`` while any is active (``PyTorchJob <ns>/<name> is running.``);
* a type with failed pods and fewer succeeded and active ones than replicas: ``Restarting``
  unless its restart policy is ``Never`` (``PyTorchJob <name> is restarting because <n> <type>
  replica(s) failed.``, a Warning ``PyTorchJobRestarting`` event), else ``Failed``
  (``PyTorchJob <name> is failed because <n> <type> replica(s) failed.``, a Normal
  ``PyTorchJobFailed`` event, ``completionTime``).

Note the two message formats (with and without the namespace), as upstream writes them. The
Restarting event is recorded for a failure not yet acted on (a Failed pod not being deleted),
once per failure instead of on every sync until the pod is gone. The rules are the engine's
(:mod:`mpi_controller.engine.training.status`), with PyTorchJob's order and elastic rule.
"""

from __future__ import annotations

from datetime import datetime

from mpi_controller.engine.training.status import StatusRules, master_or_workers
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj
from mpi_controller.pytorch.constants import (
    CONTROLLER_NAME,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.pytorch.v1.types import PyTorchJob

__all__ = ["update_pytorchjob_status"]



def update_pytorchjob_status(job: PyTorchJob, status: Obj, *, pods: list[Obj],
                             now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record."""
    rules = StatusRules(KIND, job, status, pods=pods, now=now)
    rules.set_selectors(CONTROLLER_NAME)
    order = [t for t in (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER) if t in job.replica_specs]
    return master_or_workers(rules, order, master_type=REPLICA_TYPE_MASTER,
                             worker_type=REPLICA_TYPE_WORKER,
                             any_worker_done=job.elastic_policy is not None)
