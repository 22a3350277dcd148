"""The status of a ``kubeflow.org/v1alpha2`` MPIJob, as mpi-operator v0.2.3 computes it from its
launcher Job and worker StatefulSet (it watches no pods). Pure.

* :func:`mark_created`: ``Created`` (``MPIJobCreated``, ``MPIJob <ns>/<name> is created.``),
  without an Event;
* :func:`update_status` (``updateMPIJobStatus``):

  - ``replicaStatuses.Launcher``: ``active``/``succeeded``/``failed`` of the Job's status;
    the Job ``Complete`` gives ``Succeeded`` (``MPIJobSucceeded``, ``MPIJob <ns>/<name>
    successfully completed.``, Normal event, ``completionTime``), ``Failed`` gives ``Failed``
    (``MPIJobFailed``, ``MPIJob <ns>/<name> has failed``, Warning event, ``completionTime``);
    a Job that has not finished but has failed pods (launcher ``restartPolicy: Never``) gives
    ``Restarting`` (``MPIJobRestarting``, ``MPIJob <ns>/<name> is restarting.``);
  - ``replicaStatuses.Worker.active``: the StatefulSet's ready replicas;
  - ``Running`` (``MPIJob <ns>/<name> is running.``) while the launcher is active and every
    worker is ready;

* :func:`clean_up_workers`: a finished job whose workers were scaled to 0 (cleanPodPolicy
  ``Running`` or ``All``) has ``Worker: {}``.

Conditions follow :func:`~mpi_controller.engine.training.conditions.set_condition` (v0.2.3's
``setCondition`` has the same rules). :func:`update_status` returns the condition types that
became True (for the ``mpi_operator_jobs_*`` counters) and the Events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.conditions import set_condition
from mpi_controller.kube.conditions import get_condition, has_condition
from mpi_controller.kube.events import NORMAL, WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_int, as_record
from mpi_controller.kube.timefmt import format_time
from mpi_controller.mpi import constants

__all__ = ["StatusChange", "clean_up_workers", "mark_created", "update_status"]

REASON_RESTARTING = "MPIJobRestarting"


@dataclass
class StatusChange:
    """What :func:`update_status` did besides changing the status."""

    events: list[Event] = field(default_factory=list)
    entered: list[str] = field(default_factory=list)
    """Condition types that became True (``Succeeded``, ``Failed``, ``Restarting``)."""


def mark_created(status: Obj, key: str, *, now: datetime) -> None:
    """Add ``Created`` to ``status`` (in place) when it has none; ``key`` is ``<ns>/<name>``."""
    if get_condition(status, constants.CONDITION_CREATED) is None:
        set_condition(status, constants.CONDITION_CREATED, "True", constants.REASON_MPIJOB_CREATED,
                      f"MPIJob {key} is created.", now=now)


def _job_condition(job: Mapping[str, Any], kind: str) -> bool:
    return has_condition(as_dict(job.get("status")), kind)


def update_status(status: Obj, key: str, *, launcher: Mapping[str, Any] | None,
                  workers: Mapping[str, Any] | None, now: datetime) -> StatusChange:
    """``updateMPIJobStatus`` on ``status`` (in place; module doc)."""
    change = StatusChange()
    replicas = as_dict(status.get("replicaStatuses"))

    def condition(kind: str, reason: str, message: str) -> None:
        was = has_condition(status, kind)
        if set_condition(status, kind, "True", reason, message, now=now) and not was:
            change.entered.append(kind)

    if launcher is not None:
        job_status = as_dict(launcher.get("status"))
        counts = {k: n for k in ("active", "succeeded", "failed")
                  if (n := as_int(job_status.get(k)) or 0)}
        replicas[constants.REPLICA_TYPE_LAUNCHER] = counts
        if _job_condition(launcher, "Complete"):
            message = f"MPIJob {key} successfully completed."
            change.events.append(Event(NORMAL, constants.REASON_MPIJOB_SUCCEEDED, message,
                                       terminal=True))
            status.setdefault("completionTime", format_time(now))
            condition(constants.CONDITION_SUCCEEDED, constants.REASON_MPIJOB_SUCCEEDED, message)
        elif _job_condition(launcher, "Failed"):
            message = f"MPIJob {key} has failed"
            change.events.append(Event(WARNING, constants.REASON_MPIJOB_FAILED, message,
                                       terminal=True))
            status.setdefault("completionTime", format_time(now))
            condition(constants.CONDITION_FAILED, constants.REASON_MPIJOB_FAILED, message)
        elif counts.get("failed"):
            condition(constants.CONDITION_RESTARTING, REASON_RESTARTING,
                      f"MPIJob {key} is restarting.")
    if workers is not None:
        ready = as_int(as_record(workers.get("status")).get("readyReplicas")) or 0
        replicas[constants.REPLICA_TYPE_WORKER] = {"active": ready} if ready > 0 else {}
    if replicas:
        status["replicaStatuses"] = replicas
    if launcher is not None and workers is not None:
        active = as_int(as_record(launcher.get("status")).get("active")) or 0
        ready = as_int(as_record(workers.get("status")).get("readyReplicas")) or 0
        if active > 0 and ready == as_int(as_record(workers.get("spec")).get("replicas")):
            condition(constants.CONDITION_RUNNING, constants.REASON_MPIJOB_RUNNING,
                      f"MPIJob {key} is running.")
    return change


def clean_up_workers(status: Obj) -> None:
    """``replicaStatuses.Worker = {}`` (in place)."""
    status["replicaStatuses"] = {**as_dict(status.get("replicaStatuses")),
                                 constants.REPLICA_TYPE_WORKER: {}}
