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
instead of on every sync until the pod is gone.
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
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import as_dict
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.timefmt import format_time
from mpi_controller.paddle.constants import (
    CONTROLLER_NAME,
    KIND,
    REPLICA_TYPE_MASTER,
    REPLICA_TYPE_WORKER,
)
from mpi_controller.paddle.v1.types import PaddleJob

__all__ = ["update_paddlejob_status"]

Obj = dict[str, Any]


def _count(replica: Mapping[str, Any], key: str) -> int:
    value = replica.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _new_failure(pods: list[Obj], rtype: str) -> bool:
    return any(pod_phase(p) == "Failed" and not as_dict(p.get("metadata")).get(
        "deletionTimestamp") for p in by_type(pods, rtype))


def _ordered(job: PaddleJob) -> list[str]:
    first = [t for t in (REPLICA_TYPE_MASTER, REPLICA_TYPE_WORKER) if t in job.replica_specs]
    return first + [t for t in job.replica_specs if t not in first]


def update_paddlejob_status(job: PaddleJob, status: Obj, *, pods: list[Obj],
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

    ref = f"{job.namespace}/{job.name}"
    for rtype in _ordered(job):
        spec = job.replica_specs[rtype]
        counts = replicas[rtype]
        succeeded, running, failed = (_count(counts, k) for k in ("succeeded", "active",
                                                                   "failed"))
        expected = spec.replicas - succeeded
        if job.parameter_server_mode and rtype == REPLICA_TYPE_MASTER:
            if running > 0:
                condition(CONDITION_RUNNING, "Running", f"PaddleJob {job.name} is running.")
            if expected == 0:
                finish(CONDITION_SUCCEEDED, "Succeeded",
                       f"PaddleJob {job.name} is successfully completed.")
                return events
        elif not job.parameter_server_mode and rtype == REPLICA_TYPE_WORKER:
            if expected == 0:
                finish(CONDITION_SUCCEEDED, "Succeeded", f"PaddleJob {ref} successfully completed.")
            elif running > 0:
                condition(CONDITION_RUNNING, "Running", f"PaddleJob {ref} is running.")
        if failed <= 0 or spec.replicas <= succeeded + running:
            continue
        if spec.restart_policy != RESTART_NEVER:
            message = (f"PaddleJob {job.name} is restarting because {failed} {rtype} "
                       "replica(s) failed.")
            if _new_failure(pods, rtype):
                events.append(Event(WARNING, reason(KIND, "Restarting"), message))
            condition(CONDITION_RESTARTING, "Restarting", message)
        else:
            finish(CONDITION_FAILED, "Failed", f"PaddleJob {job.name} is failed because "
                                              f"{failed} {rtype} replica(s) failed.")
    return events
