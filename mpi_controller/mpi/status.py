"""The MPIJob status and the events to record, computed from what the controller observed.

Upstream ``updateMPIJobStatus`` (mpi-operator v0.8.2 ``pkg/controller/mpi_job_controller.go``),
split into pure steps the controller calls in sync order:

1. :func:`mark_created` — no conditions yet → ``Created=True`` and event ``MPIJobCreated``;
2. :func:`mark_started` — ``startTime = now`` when unset and not suspended;
3. :func:`clean_up_worker_status` — after deleting workers (suspend or cleanPodPolicy);
4. :func:`update_mpi_job_status` — Suspended/Resumed, the launcher Job's outcome
   (Succeeded, Failed with ``BackoffLimitExceeded/<pod reason>``), replica counts, eviction,
   Running. Returns the new status, the events, and whether the status changed.

For the opt-ins of :mod:`~mpi_controller.mpi.features`: :func:`job_phase` (per-phase gauges)
and :func:`with_worker_selector` (the scale subresource's selector).

Functions never mutate their inputs. Times are passed in (``now``) and written as RFC 3339.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mpi_controller.kube.events import Event
from mpi_controller.kube.jsonvalue import as_dict, as_int, as_list, as_record, as_str, json_copy
from mpi_controller.kube.pods import pod_phase
from mpi_controller.kube.text import truncate_message
from mpi_controller.kube.timefmt import format_time
from mpi_controller.mpi import constants
from mpi_controller.mpi.conditions import (
    get_condition,
    is_finished,
    new_condition,
    set_condition,
)
from mpi_controller.mpi.decisions import (
    get_job_condition,
    is_job_failed,
    is_job_succeeded,
    select_job_pods,
)
from mpi_controller.mpi.failures import failure_details
from mpi_controller.mpi.naming import worker_selector
from mpi_controller.mpi.v2beta1.types import MPIJob, parse_mpi_job

__all__ = [
    "StatusUpdate",
    "clean_up_worker_status",
    "job_phase",
    "mark_created",
    "mark_started",
    "update_mpi_job_status",
    "with_worker_selector",
    "worker_selector_string",
]

_NORMAL, _WARNING = constants.EVENT_TYPE_NORMAL, constants.EVENT_TYPE_WARNING


@dataclass(frozen=True)
class StatusUpdate:
    """The outcome of a status computation.

    ``changed`` compares with the status the function was given; ``launcher_succeeded`` and
    ``launcher_failed`` tell the caller to count ``mpi_operator_jobs_{successful,failed}_total``
    (upstream counts on every computation that sees the outcome).
    """

    status: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    changed: bool = False
    launcher_succeeded: bool = False
    launcher_failed: bool = False


def _status_of(job: Mapping[str, Any]) -> dict[str, Any]:
    return json_copy(as_dict(job.get("status")))


def mark_created(job: Mapping[str, Any], *, now: datetime) -> tuple[dict[str, Any], list[Event]]:
    """Step 7 of the sync: add ``Created=True`` when the status has no conditions at all."""
    status = _status_of(job)
    if as_list(status.get("conditions")):
        return status, []
    view = parse_mpi_job(job)
    msg = f"MPIJob {view.namespace}/{view.name} is created."
    set_condition(
        status,
        new_condition(constants.CONDITION_CREATED, "True", constants.REASON_MPIJOB_CREATED, msg,
                      now=now),
    )
    return status, [Event(_NORMAL, constants.EVENT_MPIJOB_CREATED, msg)]


def mark_started(job: Mapping[str, Any], *, now: datetime) -> dict[str, Any]:
    """Step 9 of the sync: ``startTime = now`` when unset and the job is not suspended."""
    status = _status_of(job)
    if status.get("startTime") is None and not parse_mpi_job(job).suspended:
        status["startTime"] = format_time(now)
    return status


def clean_up_worker_status(status: Mapping[str, Any]) -> dict[str, Any]:
    """After the workers were cleaned up: ``replicaStatuses.Worker = {}``."""
    out = json_copy(dict(status))
    out["replicaStatuses"] = {**as_dict(out.get("replicaStatuses")),
                              constants.REPLICA_TYPE_WORKER: {}}
    return out


class _Builder:
    """Mutable working state of one status computation."""

    def __init__(self, job: Mapping[str, Any], now: datetime,
                 failure_pods: Sequence[Mapping[str, Any]] | None,
                 complete_on_eviction: bool) -> None:
        self.view: MPIJob = parse_mpi_job(job)
        self.status = _status_of(job)
        self.now = now
        self.failure_pods = failure_pods
        self.complete_on_eviction = complete_on_eviction
        self.events: list[Event] = []
        self.succeeded = self.failed = False

    @property
    def key(self) -> str:
        return f"{self.view.namespace}/{self.view.name}"

    def condition(self, kind: str, status: str, reason: str, message: str) -> bool:
        return set_condition(
            self.status, new_condition(kind, status, reason, message, now=self.now)
        )

    def event(self, type_: str, reason: str, message: str, *, terminal: bool = False) -> None:
        self.events.append(Event(type_, reason, message, terminal=terminal))

    def replica_statuses(self) -> dict[str, Any]:
        rs = self.status["replicaStatuses"] = dict(as_dict(self.status.get("replicaStatuses")))
        return rs


def _suspension(b: _Builder) -> None:
    if b.view.suspended:
        if b.condition(
            constants.CONDITION_SUSPENDED, "True", constants.REASON_MPIJOB_SUSPENDED,
            "MPIJob suspended",
        ):
            b.event(_NORMAL, constants.EVENT_MPIJOB_SUSPENDED, "MPIJob suspended")
    elif get_condition(b.status, constants.CONDITION_SUSPENDED) is not None and b.condition(
        constants.CONDITION_SUSPENDED, "False", constants.REASON_MPIJOB_RESUMED, "MPIJob resumed"
    ):
        b.event(_NORMAL, constants.EVENT_MPIJOB_RESUMED, "MPIJob resumed")
        b.status["startTime"] = format_time(b.now)


def _last_failed_pod(pods: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    last: Mapping[str, Any] | None = None
    for pod in pods:
        if pod_phase(pod) != "Failed":
            continue
        stamp = as_str(as_record(pod.get("metadata")).get("creationTimestamp"))
        if last is None or as_str(as_record(last.get("metadata")).get("creationTimestamp")) < stamp:
            last = pod
    return last


def _launcher_failed(
    b: _Builder, launcher: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]
) -> None:
    cond = get_job_condition(launcher, "Failed") or {}
    reason = as_str(cond.get("reason")) or constants.REASON_MPIJOB_FAILED
    msg = as_str(cond.get("message")) or f"MPIJob {b.key} has failed"
    if reason == constants.REASON_BACKOFF_LIMIT_EXCEEDED:
        pod = _last_failed_pod(pods)
        if pod is not None:
            pod_status = as_dict(pod.get("status"))
            reason += "/" + as_str(pod_status.get("reason"))
            msg = truncate_message(msg + ": " + as_str(pod_status.get("message")))
    if b.failure_pods is not None and (details := failure_details(b.failure_pods)):
        msg = truncate_message(f"{msg}; failed: {details}")
    b.event(_WARNING, reason, msg, terminal=True)
    if b.status.get("completionTime") is None:
        b.status["completionTime"] = format_time(b.now)
    b.condition(constants.CONDITION_FAILED, "True", reason, msg)
    b.failed = True


def _launcher(
    b: _Builder, launcher: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]]
) -> int:
    pods = select_job_pods(launcher, candidates)
    running = sum(1 for pod in pods if pod_phase(pod) == "Running")
    replica: dict[str, Any] = {}
    failed = as_int(as_record(launcher.get("status")).get("failed"))
    if failed:
        replica["failed"] = failed
    b.replica_statuses()[constants.REPLICA_TYPE_LAUNCHER] = replica
    if is_job_succeeded(launcher):
        replica["succeeded"] = 1
        msg = f"MPIJob {b.key} successfully completed."
        b.event(_NORMAL, constants.EVENT_MPIJOB_SUCCEEDED, msg, terminal=True)
        completion = as_record(launcher.get("status")).get("completionTime")
        if b.status.get("completionTime") is None and completion is not None:
            b.status["completionTime"] = completion
        b.condition(constants.CONDITION_SUCCEEDED, "True", constants.REASON_MPIJOB_SUCCEEDED, msg)
        b.succeeded = True
    elif is_job_failed(launcher):
        _launcher_failed(b, launcher, pods)
    elif running:
        replica["active"] = running
    return running


def _workers(b: _Builder, workers: Sequence[Mapping[str, Any]]) -> int:
    counts = {"active": 0, "succeeded": 0, "failed": 0}
    evicted: list[Mapping[str, Any]] = []
    for pod in workers:
        phase = pod_phase(pod)
        if phase == "Failed":
            counts["failed"] += 1
            if as_record(pod.get("status")).get("reason") == "Evicted":
                evicted.append(pod)
        elif phase == "Succeeded":
            counts["succeeded"] += 1
        elif phase == "Running":
            counts["active"] += 1
    b.replica_statuses()[constants.REPLICA_TYPE_WORKER] = {k: v for k, v in counts.items() if v}
    if evicted:
        msg = f"{len(evicted)}/{len(workers)} workers are evicted"
        if b.failure_pods is not None:
            msg = truncate_message(msg + ": " + failure_details(evicted))
        b.condition(constants.CONDITION_FAILED, "True", constants.REASON_MPIJOB_EVICTED, msg)
        b.event(_WARNING, constants.EVENT_MPIJOB_EVICTED, msg, terminal=True)
        if b.complete_on_eviction and b.status.get("completionTime") is None:
            b.status["completionTime"] = format_time(b.now)
    return counts["active"]


def _running(
    b: _Builder, has_launcher: bool, launcher_running: int, running: int, workers: int
) -> None:
    if b.view.suspended:
        msg = f"MPIJob {b.key} is suspended."
        b.condition(constants.CONDITION_RUNNING, "False", constants.REASON_MPIJOB_SUSPENDED, msg)
    elif is_finished(b.status):
        if get_condition(b.status, constants.CONDITION_RUNNING) is None:
            msg = f"MPIJob {b.key} is finished but Running condition was never set."
            stamp = b.status.get("completionTime") or format_time(b.now)
            cond = {
                "type": constants.CONDITION_RUNNING,
                "status": "False",
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
                "reason": constants.REASON_MPIJOB_RUNNING,
                "message": msg,
            }
            b.status["conditions"] = [*as_list(b.status.get("conditions")), cond]
    elif has_launcher and launcher_running >= 1 and running == workers:
        b.condition(
            constants.CONDITION_RUNNING, "True", constants.REASON_MPIJOB_RUNNING,
            f"MPIJob {b.key} is running.",
        )
        b.event(_NORMAL, constants.EVENT_MPIJOB_RUNNING, f"MPIJob {b.key} is running")


def update_mpi_job_status(
    job: Mapping[str, Any],
    *,
    launcher: Mapping[str, Any] | None,
    launcher_pods: Sequence[Mapping[str, Any]] = (),
    workers: Sequence[Mapping[str, Any]] = (),
    now: datetime,
    failure_pods: Sequence[Mapping[str, Any]] | None = None,
    complete_on_eviction: bool = False,
) -> StatusUpdate:
    """The new status of ``job`` (its ``status`` is the starting point) and the events.

    ``launcher`` is the launcher Job (or ``None``); ``launcher_pods`` are candidate pods, of
    which those matching the Job's ``spec.selector`` and controlled by it count; ``workers``
    are the worker pods fetched in this sync (empty when suspended or finished).

    Opt-ins (:mod:`~mpi_controller.mpi.features`; off by default, as upstream):
    ``failure_pods`` (the job's worker and launcher pods; ``FailureDetails``) makes the
    Failed condition and event name what failed (:mod:`~mpi_controller.mpi.failures`);
    ``complete_on_eviction`` (``CleanUpEvictedJobs``) sets ``completionTime`` when workers
    are evicted, so the job is finished like any failed job.
    """
    b = _Builder(job, now, failure_pods, complete_on_eviction)
    before = json_copy(b.status)
    _suspension(b)
    launcher_running = _launcher(b, launcher, launcher_pods) if launcher is not None else 0
    running = _workers(b, workers)
    _running(b, launcher is not None, launcher_running, running, len(workers))
    return StatusUpdate(
        status=b.status,
        events=b.events,
        changed=b.status != before,
        launcher_succeeded=b.succeeded,
        launcher_failed=b.failed,
    )


_PHASES = (constants.CONDITION_SUCCEEDED, constants.CONDITION_FAILED, constants.CONDITION_SUSPENDED,
           constants.CONDITION_RESTARTING, constants.CONDITION_RUNNING)


def job_phase(status: Mapping[str, Any]) -> str:
    """The job's phase for the ``JobMetrics`` gauges: the first of Succeeded, Failed,
    Suspended, Restarting, Running whose condition is True, else ``Created``."""
    for phase in _PHASES:
        cond = get_condition(status, phase)
        if cond is not None and cond.get("status") == "True":
            return phase
    return constants.CONDITION_CREATED


def worker_selector_string(job: Mapping[str, Any]) -> str:
    """The workers' label selector as ``metav1.FormatLabelSelector`` writes it (keys sorted)."""
    name = parse_mpi_job(job).name
    return ",".join(f"{k}={v}" for k, v in sorted(worker_selector(name).items()))


def with_worker_selector(status: Mapping[str, Any], job: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``status`` whose ``replicaStatuses.Worker.selector`` is the workers' selector
    (the ``ScaleSelector`` gate: the CRD's scale subresource reads it as
    ``labelSelectorPath``, and an HPA selects the worker pods with it). Without a Worker spec
    the status is returned unchanged."""
    out = json_copy(dict(status))
    if parse_mpi_job(job).spec.worker is None:
        return out
    replicas = out["replicaStatuses"] = dict(as_dict(out.get("replicaStatuses")))
    worker = dict(as_dict(replicas.get(constants.REPLICA_TYPE_WORKER)))
    worker["selector"] = worker_selector_string(job)
    replicas[constants.REPLICA_TYPE_WORKER] = worker
    return out
