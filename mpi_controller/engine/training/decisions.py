"""The pure decisions of training-operator v1.9's ``ReconcileJobs`` (``common/job.go``,
``common/pod.go``, ``core/job.go``, ``core/status.go``, ``common/util/util.go``).

* **Exit codes and restarts** (:func:`exit_code`, :func:`failed_pod_action`): the exit code is
  the ``state.terminated.exitCode`` of the kind's default container (``0xbeef`` = 48879 when it
  has not terminated, which counts as retryable); a Failed pod is restarted (deleted, to be
  created again) under ``OnFailure``, ``Always``, or ``ExitCode`` with a code >= 128; it fails
  the job under ``ExitCode`` with a code of 1-127; under ``Never`` it only counts as failed.
* **Replica statuses** (:func:`count_pod`): Running pods are active (a Running pod being deleted
  counts as failed: it may never reach Failed), Succeeded and Failed pods are counted as such.
* **Backoff limit** (:func:`exceeds_backoff_limit`, :func:`past_backoff_limit`): a new failure
  while not every replica is active, with ``backoffLimit`` 0 (upstream compares with the work
  queue's requeue count, always 0 under controller-runtime); or the restart counts of the
  Running pods of replicas restarted by policy (OnFailure, Always, ExitCode) reach the limit
  (pass 0 when the limit is 0).
* **Deadline** (:func:`past_active_deadline`): ``now - startTime >= activeDeadlineSeconds``.
* **TTL** (:func:`ttl_remaining`): seconds until a finished job is deleted
  (``completionTime + ttlSecondsAfterFinished``), 0 when due, ``None`` without a TTL.
* **Cleanup** (:func:`pods_to_clean_up`): which pods (and their same-named Services) go: none
  for a finished job under cleanPodPolicy ``None``, Running and Pending ones under ``Running``,
  all otherwise (``All``, or a job that has not finished).
* **Abnormal pods** (:func:`abnormal_pod_events`): the Warning events upstream's
  ``RecordAbnormalPods`` records for active pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mpi_controller.engine.training.api import (
    CLEAN_POD_POLICY_NONE,
    CLEAN_POD_POLICY_RUNNING,
    RESTART_ALWAYS,
    RESTART_EXIT_CODE,
    RESTART_ON_FAILURE,
    ReplicaSpec,
    RunPolicy,
)
from mpi_controller.engine.training.replicas import by_type
from mpi_controller.kube.events import WARNING, Event
from mpi_controller.kube.jsonvalue import Obj, as_dict, as_int, as_record, as_str
from mpi_controller.kube.pods import pod_phase

__all__ = [
    "MISSING_EXIT_CODE",
    "FailedPodAction",
    "abnormal_pod_events",
    "count_pod",
    "deadline_remaining",
    "exceeds_backoff_limit",
    "exit_code",
    "failed_pod_action",
    "is_active",
    "parse_time",
    "past_active_deadline",
    "past_backoff_limit",
    "pods_to_clean_up",
    "ttl_remaining",
]

MISSING_EXIT_CODE = 0xBEEF
RESTARTED_BY_POLICY = (RESTART_ON_FAILURE, RESTART_ALWAYS, RESTART_EXIT_CODE)


def _meta(pod: Mapping[str, Any]) -> dict[str, Any]:
    return as_dict(pod.get("metadata"))


def _dicts(value: object) -> list[dict[str, Any]]:
    """The dict entries of ``value`` when it is a list (``[]`` otherwise)."""
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def _containers(pod: Mapping[str, Any], key: str = "containerStatuses") -> list[dict[str, Any]]:
    return _dicts(as_record(pod.get("status")).get(key))


def _terminated(container: Mapping[str, Any]) -> dict[str, Any] | None:
    state = as_dict(container.get("state"))
    terminated = state.get("terminated")
    return terminated if isinstance(terminated, dict) else None


def exit_code(pod: Mapping[str, Any], container_name: str) -> int | None:
    """The exit code of the terminated container ``container_name`` (``None``: none such)."""
    code = None
    for container in _containers(pod):
        terminated = _terminated(container)
        if container.get("name") == container_name and terminated is not None:
            code = as_int(terminated.get("exitCode")) or 0
    return code


@dataclass(frozen=True)
class FailedPodAction:
    """What a Failed pod asks for: ``restart`` (delete it) or ``fail`` the job, or neither."""

    restart: bool = False
    fail: bool = False


def failed_pod_action(restart_policy: str, code: int | None) -> FailedPodAction:
    """The decision for a Failed pod (module doc); ``code`` from :func:`exit_code`."""
    retryable = (MISSING_EXIT_CODE if code is None else code) >= 128
    if restart_policy in (RESTART_ON_FAILURE, RESTART_ALWAYS) or (
            restart_policy == RESTART_EXIT_CODE and retryable):
        return FailedPodAction(restart=True)
    if restart_policy == RESTART_EXIT_CODE:
        return FailedPodAction(fail=True)
    return FailedPodAction()


def count_pod(replica_status: dict[str, Any], pod: Mapping[str, Any]) -> None:
    """Add ``pod`` to a ``replicaStatuses`` entry (changed in place; module doc)."""
    phase = pod_phase(pod)
    if phase == "Running":
        key = "failed" if _meta(pod).get("deletionTimestamp") else "active"
    elif phase == "Succeeded":
        key = "succeeded"
    elif phase == "Failed":
        key = "failed"
    else:
        return
    replica_status[key] = int(replica_status.get(key) or 0) + 1


def is_active(pod: Mapping[str, Any]) -> bool:
    """Neither finished nor being deleted (``FilterActivePods``)."""
    return pod_phase(pod) not in ("Succeeded", "Failed") \
        and not _meta(pod).get("deletionTimestamp")


def exceeds_backoff_limit(policy: RunPolicy, *, failed: int, previously_failed: int,
                          active: int, replicas: int) -> bool:
    """A new failure while not all replicas are active, with ``backoffLimit`` 0."""
    limit = policy.backoff_limit
    return (limit is not None and failed > previously_failed and active != replicas
            and limit < 1)


def past_backoff_limit(policy: RunPolicy, specs: Mapping[str, ReplicaSpec],
                       pods: Iterable[Obj]) -> bool:
    """The restart counts of the Running pods of restartable replicas reach ``backoffLimit``."""
    limit = policy.backoff_limit
    if limit is None:
        return False
    pods = list(pods)
    restarts = 0
    for spec in specs.values():
        if spec.restart_policy not in RESTARTED_BY_POLICY:
            continue
        for pod in by_type(pods, spec.rtype):
            if pod_phase(pod) != "Running":
                continue
            for container in (*_containers(pod, "initContainerStatuses"), *_containers(pod)):
                restarts += as_int(container.get("restartCount")) or 0
    return restarts > 0 if limit == 0 else restarts >= limit


def parse_time(text: object) -> datetime | None:
    """A ``metav1.Time`` string as a datetime (``None``: absent or malformed)."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def past_active_deadline(policy: RunPolicy, status: Mapping[str, Any], now: datetime) -> bool:
    """``now - startTime >= activeDeadlineSeconds`` (False without either)."""
    start = parse_time(status.get("startTime"))
    if policy.active_deadline_seconds is None or start is None:
        return False
    return (now - start).total_seconds() >= policy.active_deadline_seconds


def deadline_remaining(policy: RunPolicy, status: Mapping[str, Any],
                       now: datetime) -> float | None:
    """Seconds until :func:`past_active_deadline` holds (``None`` without a deadline)."""
    start = parse_time(status.get("startTime"))
    if policy.active_deadline_seconds is None or start is None:
        return None
    return max(policy.active_deadline_seconds - (now - start).total_seconds(), 0.0)


def ttl_remaining(policy: RunPolicy, status: Mapping[str, Any], now: datetime) -> float | None:
    """Seconds until a finished job is deleted, 0 when due, ``None`` without a TTL (or while
    suspended, or without a completion time)."""
    finish = parse_time(status.get("completionTime"))
    if policy.ttl_seconds_after_finished is None or policy.suspend or finish is None:
        return None
    return max(policy.ttl_seconds_after_finished - (now - finish).total_seconds(), 0.0)


def pods_to_clean_up(pods: Iterable[Obj], policy: RunPolicy, *, finished: bool) -> list[Obj]:
    """The pods ``DeletePodsAndServices`` deletes (module doc); pods already being deleted are
    left out (upstream skips them too)."""
    live = [p for p in pods if not _meta(p).get("deletionTimestamp")]
    if not finished:
        return live
    if policy.clean_pod_policy == CLEAN_POD_POLICY_NONE:
        return []
    if policy.clean_pod_policy == CLEAN_POD_POLICY_RUNNING:
        return [p for p in live if pod_phase(p) in ("Running", "Pending")]
    return live


def abnormal_pod_events(pods: Iterable[Obj]) -> list[tuple[str, Event]]:
    """``RecordAbnormalPods`` for the active pods: ``(pod uid, Warning event)`` for each
    container that terminated with a non-zero code or waits with a message; for a pod without
    container statuses, its init containers the same way; for a pod with neither, its last
    condition when that is not True."""
    out: list[tuple[str, Event]] = []
    for pod in pods:
        status, meta = as_dict(pod.get("status")), _meta(pod)
        if as_str(status.get("phase")) in ("Succeeded", "Failed") \
                or meta.get("deletionTimestamp"):
            continue  # not is_active(pod)
        uid, name = as_str(meta.get("uid")), as_str(meta.get("name"))
        containers = _dicts(status.get("containerStatuses")) \
            or _dicts(status.get("initContainerStatuses"))
        for container in containers:
            event = _container_event(name, container)
            if event is not None:
                out.append((uid, event))
        if containers:
            continue
        conditions = _dicts(status.get("conditions"))
        if conditions and conditions[-1].get("status") != "True":
            last = conditions[-1]
            out.append((uid, Event(WARNING, as_str(last.get("reason")),
                                   f"Error pod {name} condition message: "
                                   f"{as_str(last.get('message'))}")))
    return out


def _container_event(pod_name: str, container: Mapping[str, Any]) -> Event | None:
    name = as_str(container.get("name"))
    terminated = _terminated(container)
    if terminated is not None and as_int(terminated.get("exitCode")):
        return Event(WARNING, as_str(terminated.get("reason")),
                     f"Error pod {pod_name} container {name} exitCode: "
                     f"{terminated.get('exitCode')} terminated message: "
                     f"{as_str(terminated.get('message'))}")
    waiting = as_dict(as_record(container.get("state")).get("waiting"))
    if as_str(waiting.get("message")):
        return Event(WARNING, as_str(waiting.get("reason")),
                     f"Error pod {pod_name} container {name} waiting message: "
                     f"{as_str(waiting.get('message'))}")
    return None
