"""The status of a ``kubeflow.org/v1`` MPIJob, as training-operator v1.9 computes it. Pure.

Two steps, as upstream runs them:

1. :func:`count_replicas` (``updateMPIJobStatus``): ``replicaStatuses.Launcher`` is
   ``succeeded``/``failed``/``active`` 1 by the launcher pod's phase, ``Worker`` counts the
   workers by phase (``active`` = Running). Its Events: ``mpijobsSucceeded`` (``MPIJob
   <ns>/<name> successfully completed.``), the launcher's failure reason or ``MPIJobFailed``
   (Warning, ``MPIJob <ns>/<name> has failed``), ``MPIJobEvicted`` (Warning, ``<n>/<m> workers
   are evicted``) and ``MPIJobRunning`` (``MPIJob <ns>/<name> is running``, while the launcher
   and every worker run). The conditions upstream sets here never reach the API server (its
   ``UpdateJobStatus`` writes the status it was given, without them), so none are set.
2. :func:`update_job_status` (``UpdateJobStatus``), per replica type in the order written: a
   running launcher gives ``Running`` (``MPIJob <name> is running.``); a launcher with nothing
   left to succeed gives ``Succeeded`` (``MPIJob <name> is successfully completed.``, event
   ``MPIJobSucceeded``, ``completionTime``) and ends the rules; a type with failed replicas
   gives ``Restarting`` under ``ExitCode`` (``MPIJob <name> is restarting because <n> <Type>
   replica(s) failed.``, Warning event) and otherwise ``Failed`` with upstream's doubled reason
   ``MPIJobMPIJobFailed`` (``MPIJob <name> is failed because <n> <Type> replica(s) failed.``,
   Normal event ``MPIJobFailed``, ``completionTime``). Conditions follow
   :func:`~mpi_controller.engine.training.conditions.set_condition`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from mpi_controller.engine.training.api import (
    CONDITION_FAILED,
    CONDITION_RESTARTING,
    CONDITION_RUNNING,
    CONDITION_SUCCEEDED,
    RESTART_EXIT_CODE,
    ReplicaSpec,
)
from mpi_controller.engine.training.conditions import set_condition
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_int, as_record, as_str
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.timefmt import format_time
from mpi_controller.mpi import constants

__all__ = ["EVENT_PLURAL_SUCCEEDED", "REASON_FAILED", "count_replicas", "update_job_status"]

EVENT_PLURAL_SUCCEEDED: Final = "mpijobsSucceeded"
"""``NewReason(MPIJobPlural, "Succeeded")``, upstream's event reason for the launcher's success."""
REASON_FAILED: Final = "MPIJobMPIJobFailed"
"""``NewReason(kind, NewReason(kind, "Failed"))``: upstream's Failed condition reason."""


def _reason(pod: Mapping[str, Any]) -> str:
    return as_str(as_record(pod.get("status")).get("reason"))


def count_replicas(key: str, launcher: Mapping[str, Any] | None,
                   workers: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Obj], list[Event]]:
    """``(replicaStatuses, events)`` of step 1 (module doc); ``key`` is ``<ns>/<name>``."""
    statuses: dict[str, Obj] = {}
    events: list[Event] = []
    if launcher is not None:
        counts: Obj = {}
        phase = pod_phase(launcher)
        if phase == "Succeeded":
            counts["succeeded"] = 1
            events.append(Event(NORMAL, EVENT_PLURAL_SUCCEEDED,
                                f"MPIJob {key} successfully completed.", terminal=True))
        elif phase == "Failed":
            counts["failed"] = 1
            events.append(Event(WARNING, _reason(launcher) or constants.REASON_MPIJOB_FAILED,
                                f"MPIJob {key} has failed", terminal=True))
        elif phase == "Running":
            counts["active"] = 1
        statuses[constants.REPLICA_TYPE_LAUNCHER] = counts
    worker_counts: Obj = {}
    running = evicted = 0
    for pod in workers:
        phase = pod_phase(pod)
        field = {"Failed": "failed", "Succeeded": "succeeded", "Running": "active"}.get(phase)
        if field is not None:
            worker_counts[field] = worker_counts.get(field, 0) + 1
        running += phase == "Running"
        evicted += phase == "Failed" and _reason(pod) == "Evicted"
    statuses[constants.REPLICA_TYPE_WORKER] = worker_counts
    if evicted:
        events.append(Event(WARNING, constants.REASON_MPIJOB_EVICTED,
                            f"{evicted}/{len(workers)} workers are evicted"))
    if launcher is not None and pod_phase(launcher) == "Running" and running == len(workers):
        events.append(Event(NORMAL, constants.REASON_MPIJOB_RUNNING, f"MPIJob {key} is running"))
    return statuses, events


def update_job_status(name: str, specs: Mapping[str, ReplicaSpec], status: Obj, *,
                      now: datetime) -> list[Event]:
    """Step 2 (module doc) on ``status`` (changed in place); the Events to record."""
    events: list[Event] = []

    def condition(kind: str, reason: str, message: str) -> None:
        set_condition(status, kind, "True", reason, message, now=now)

    replicas = as_dict(status.get("replicaStatuses"))
    for rtype, spec in specs.items():
        counts = as_dict(replicas.get(rtype))
        succeeded = as_int(counts.get("succeeded")) or 0
        failed = as_int(counts.get("failed")) or 0
        if rtype == constants.REPLICA_TYPE_LAUNCHER:
            if (as_int(counts.get("active")) or 0) > 0:
                condition(CONDITION_RUNNING, constants.REASON_MPIJOB_RUNNING,
                          f"MPIJob {name} is running.")
            if spec.replicas - succeeded == 0:
                message = f"MPIJob {name} is successfully completed."
                events.append(Event(NORMAL, constants.REASON_MPIJOB_SUCCEEDED, message,
                                    terminal=True))
                status.setdefault("completionTime", format_time(now))
                condition(CONDITION_SUCCEEDED, constants.REASON_MPIJOB_SUCCEEDED, message)
                return events
        if failed > 0:
            what = f"{failed} {rtype} replica(s) failed."
            if spec.restart_policy == RESTART_EXIT_CODE:
                message = f"MPIJob {name} is restarting because {what}"
                events.append(Event(WARNING, "MPIJobRestarting", message))
                condition(CONDITION_RESTARTING, "MPIJobRestarting", message)
            else:
                message = f"MPIJob {name} is failed because {what}"
                events.append(Event(NORMAL, constants.REASON_MPIJOB_FAILED, message,
                                    terminal=True))
                status.setdefault("completionTime", format_time(now))
                condition(CONDITION_FAILED, REASON_FAILED, message)
    return events
