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
once per failure instead of on every sync until the pod is gone.
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
    RESTART_NEVER,
    ReplicaSpec,
)
from mpi_controller.engine.training.children import by_type, replica_selector
from mpi_controller.engine.training.conditions import reason, set_condition
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import as_dict
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.timefmt import format_time
from mpi_controller.pytorch.constants import (
    CONTROLLER_NAME,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.pytorch.v1.types import PyTorchJob

__all__ = ["update_pytorchjob_status"]

Obj = dict[str, Any]


def _count(replica: Mapping[str, Any], key: str) -> int:
    value = replica.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _new_failure(pods: list[Obj], rtype: str) -> bool:
    return any(pod_phase(p) == "Failed" and not as_dict(p.get("metadata")).get(
        "deletionTimestamp") for p in by_type(pods, rtype))


def update_pytorchjob_status(job: PyTorchJob, status: Obj, *, pods: list[Obj],
                             now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record."""
    events: list[Event] = []
    replicas: dict[str, Any] = as_dict(status.get("replicaStatuses"))
    status["replicaStatuses"] = replicas
    for rtype in job.replica_specs:
        entry = replicas.get(rtype)
        if not isinstance(entry, dict):
            entry = replicas[rtype] = {}
        entry["selector"] = replica_selector(job.name, CONTROLLER_NAME, rtype)

    def condition(condition_type: str, what: str, message: str) -> None:
        set_condition(status, condition_type, "True", reason(KIND, what), message, now=now)

    def finish(condition_type: str, what: str, message: str) -> None:
        events.append(Event(NORMAL, reason(KIND, what), message))
        status.setdefault("completionTime", format_time(now))
        condition(condition_type, what, message)

    ordered = [t for t in (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER) if t in job.replica_specs]
    for rtype in ordered:
        spec: ReplicaSpec = job.replica_specs[rtype]
        counts = replicas[rtype]
        succeeded, running, failed = (_count(counts, k) for k in ("succeeded", "active",
                                                                   "failed"))
        expected = spec.replicas - succeeded
        if job.master is not None and rtype == REPLICA_TYPE_MASTER:
            if running > 0:
                condition(CONDITION_RUNNING, "Running", f"PyTorchJob {job.name} is running.")
            if expected == 0:
                finish(CONDITION_SUCCEEDED, "Succeeded",
                       f"PyTorchJob {job.name} is successfully completed.")
                return events
        elif job.master is None and rtype == REPLICA_TYPE_WORKER:
            ref = f"{job.namespace}/{job.name}"
            if expected == 0 or (job.elastic_policy is not None and succeeded > 0):
                finish(CONDITION_SUCCEEDED, "Succeeded",
                       f"PyTorchJob {ref} successfully completed.")
            elif running > 0:
                condition(CONDITION_RUNNING, "Running", f"PyTorchJob {ref} is running.")
        if failed <= 0 or spec.replicas <= succeeded + running:
            continue
        if spec.restart_policy != RESTART_NEVER:
            message = (f"PyTorchJob {job.name} is restarting because {failed} {rtype} "
                       "replica(s) failed.")
            if _new_failure(pods, rtype):
                events.append(Event(WARNING, reason(KIND, "Restarting"), message))
            condition(CONDITION_RESTARTING, "Restarting", message)
        else:
            finish(CONDITION_FAILED, "Failed", f"PyTorchJob {job.name} is failed because "
                                              f"{failed} {rtype} replica(s) failed.")
    return events
