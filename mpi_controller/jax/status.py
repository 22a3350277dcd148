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
)
from mpi_controller.engine.training.children import by_type, replica_selector
from mpi_controller.engine.training.conditions import reason, set_condition
from mpi_controller.jax.constants import CONTROLLER_NAME, KIND, REPLICA_TYPE_WORKER
from mpi_controller.jax.v1.types import JAXJob
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import as_dict
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.timefmt import format_time

__all__ = ["update_jaxjob_status"]

Obj = dict[str, Any]


def _count(replica: Mapping[str, Any], key: str) -> int:
    value = replica.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _new_failure(pods: list[Obj], rtype: str) -> bool:
    return any(pod_phase(p) == "Failed" and not as_dict(p.get("metadata")).get(
        "deletionTimestamp") for p in by_type(pods, rtype))


def update_jaxjob_status(job: JAXJob, status: Obj, *, pods: list[Obj],
                         now: datetime) -> list[Event]:
    """Apply the rules of the module doc to ``status``; the Events to record."""
    events: list[Event] = []
    replicas: dict[str, Any] = as_dict(status.get("replicaStatuses"))
    status["replicaStatuses"] = replicas
    ref = f"{job.namespace}/{job.name}"

    def condition(condition_type: str, what: str, message: str) -> None:
        set_condition(status, condition_type, "True", reason(KIND, what), message, now=now)

    def finish(condition_type: str, what: str, message: str) -> None:
        events.append(Event(NORMAL, reason(KIND, what), message))
        status.setdefault("completionTime", format_time(now))
        condition(condition_type, what, message)

    for rtype, spec in job.replica_specs.items():
        counts = replicas.get(rtype)
        if not isinstance(counts, dict):
            counts = replicas[rtype] = {}
        counts["selector"] = replica_selector(job.name, CONTROLLER_NAME, rtype)
        succeeded, running, failed = (_count(counts, k) for k in ("succeeded", "active",
                                                                   "failed"))
        if rtype == REPLICA_TYPE_WORKER:
            if spec.replicas - succeeded == 0:
                finish(CONDITION_SUCCEEDED, "Succeeded", f"JAXJob {ref} successfully completed.")
            elif running > 0:
                condition(CONDITION_RUNNING, "Running", f"JAXJob {ref} is running.")
        if failed <= 0 or spec.replicas <= succeeded + running:
            continue
        if spec.restart_policy != RESTART_NEVER:
            message = (f"JAXJob {job.name} is restarting because {failed} {rtype} "
                       "replica(s) failed.")
            if _new_failure(pods, rtype):
                events.append(Event(WARNING, reason(KIND, "Restarting"), message))
            condition(CONDITION_RESTARTING, "Restarting", message)
        else:
            finish(CONDITION_FAILED, "Failed", f"JAXJob {job.name} is failed because {failed} "
                                              f"{rtype} replica(s) failed.")
    return events
