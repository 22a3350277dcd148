"""The JAXJob status rules (training-operator v1.9 ``JAXJobReconciler.UpdateJobStatus``), run
after the replicas were reconciled and counted, on the status dict (changed in place).

For every replica type (only ``Worker`` passes validation), with ``expected = replicas -
succeeded``:

* ``replicaStatuses[<type>].selector`` is set: the job's labels and the replica type as a label
  selector string (``metav1.FormatLabelSelector``), which the CRD's scale subresource
  publishes (upstream's ``GenLabelSelector`` override exists for this field alone);
* the Worker decides: none expected → ``Succeeded`` (``JAXJob <ns>/<name> successfully
  completed.``, a Normal ``JAXJobSucceeded`` event, ``completionTime``); else ``Running`` while
  any is active (``JAXJob <ns>/<name> is running.``);
* a type with failed pods and fewer succeeded and active ones than replicas: ``Restarting``
  unless its restart policy is ``Never`` (``JAXJob <name> is restarting because <n> <type>
  replica(s) failed.``, a Warning ``JAXJobRestarting`` event), else ``Failed`` (``JAXJob <name>
  is failed because <n> <type> replica(s) failed.``, a Normal ``JAXJobFailed`` event,
  ``completionTime``).

Note the two message formats (with and without the namespace), as upstream writes them. The
Restarting event is recorded for a failure not yet acted on (a Failed pod not being deleted),
once per failure instead of on every sync until the pod is gone. The rules are the engine's
(:mod:`mpi_controller.engine.training.status`) for a kind without a Master.
"""

from __future__ import annotations

from datetime import datetime

from mpi_controller.engine.training.status import StatusRules, master_or_workers
from mpi_controller.jax.constants import CONTROLLER_NAME, KIND, REPLICA_TYPE_WORKER
from mpi_controller.jax.v1.types import JAXJob
from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import Obj

__all__ = ["update_jaxjob_status"]



def update_jaxjob_status(job: JAXJob, status: Obj, *, pods: list[Obj],
                         now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record."""
    rules = StatusRules(KIND, job, status, pods=pods, now=now)
    rules.set_selectors(CONTROLLER_NAME)
    return master_or_workers(rules, job.replica_specs, master_type=None,
                             worker_type=REPLICA_TYPE_WORKER)
